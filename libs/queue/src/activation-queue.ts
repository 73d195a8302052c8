/**
 * The doorbell: "run R has something to process". Redis is a doorbell, not a store (DESIGN §1.1):
 * a ring may be lost (a flushed Redis, a ring that lands while R is being activated) and nothing
 * is lost with it, because a reconciler re-rings every run whose inbox or timers are waiting.
 */
export interface ActivationQueue {
  /** Asks for an activation of the run; rings while one is already waiting collapse into it. */
  ring(runId: string): Promise<void>;
  /** Starts handing activations to `handler`, at most `concurrency` at a time. */
  consume(handler: (runId: string) => Promise<void>, concurrency?: number): void;
  close(): Promise<void>;
}

/** The embedded default: activations in this process, no Redis. */
export class InProcessQueue implements ActivationQueue {
  private handler: ((runId: string) => Promise<void>) | undefined;
  private readonly waiting = new Set<string>();
  private readonly queue: string[] = [];
  private active = 0;
  private concurrency = 64;
  private closed = false;

  async ring(runId: string): Promise<void> {
    if (this.closed || this.waiting.has(runId)) return;
    this.waiting.add(runId);
    this.queue.push(runId);
    this.pump();
  }

  consume(handler: (runId: string) => Promise<void>, concurrency = 64): void {
    this.handler = handler;
    this.concurrency = concurrency;
    this.pump();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.queue.length = 0;
    this.waiting.clear();
  }

  private pump(): void {
    while (this.handler !== undefined && this.active < this.concurrency && this.queue.length > 0) {
      const runId = this.queue.shift()!;
      this.waiting.delete(runId);
      this.active++;
      void this.handler(runId)
        .catch(() => {}) // the handler reports its own failures; the reconciler rings again
        .finally(() => {
          this.active--;
          this.pump();
        });
    }
  }
}
