/**
 * Metrics off a tool call's critical path. prom-client hashes a label set on every `inc`: a few
 * such counts per step cost a hot tool call about 10 µs between its commits. A step queues them
 * here instead; they are counted once the event loop has sent what was urgent (setImmediate runs
 * after the I/O callbacks of this turn), typically while the next commit waits for its fsync.
 */
const queue: (() => void)[] = [];

function drain(): void {
  for (const task of queue.splice(0)) {
    try {
      task();
    } catch {
      // a metric must never break a run
    }
  }
}

export function countLater(task: () => void): void {
  if (queue.push(task) === 1) setImmediate(drain);
}
