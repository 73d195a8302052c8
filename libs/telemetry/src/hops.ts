/**
 * Hop marks: when a run passed each point on its way from `POST /v1/runs` to its result reaching
 * the client (API insert, ring, worker pick-up, lease, sandbox context, top level, each commit,
 * notice), for `npm run bench:hops -w load-tests`. Off unless the process starts with
 * REWIND_HOP_TRACE=1; on, each mark is one line on stderr, `rewind-hop <name> <runId> <ms>
 * [<seq>]`: the time in ms since the Unix epoch with µs digits, comparable between processes on
 * one machine, and for a commit the seq of its last entry.
 * Off, a mark costs one boolean test: the hot path carries it always. On, marks are written
 * together every FLUSH_MS and as the process exits: a write per mark (a syscall that wakes the
 * reader) was a fifth of a worker's CPU at C = 1, and slowed the very hops it measured.
 */
const ON = process.env.REWIND_HOP_TRACE === "1";
const FLUSH_MS = 100;
const pending: string[] = [];
let flushTimer: NodeJS.Timeout | undefined;

function flush(): void {
  flushTimer = undefined;
  if (pending.length === 0) return;
  // Synchronous for files and pipes on Linux: what is written at exit is not lost.
  process.stderr.write(pending.join(""));
  pending.length = 0;
}

if (ON) process.on("exit", flush);

/** The clock the marks use: take it where a hop begins before the run's id is known. */
export function hopClock(): number {
  return performance.timeOrigin + performance.now();
}

/** Marks that `runId` passed `name` now (or at `at`, read earlier from hopClock). */
export function hop(name: string, runId: string, at?: number, seq?: number): void {
  if (!ON) return;
  const tail = seq === undefined ? "" : ` ${seq}`;
  pending.push(`rewind-hop ${name} ${runId} ${(at ?? hopClock()).toFixed(3)}${tail}\n`);
  flushTimer ??= setTimeout(flush, FLUSH_MS).unref();
}

/** Whether marks are written: work done only to mark a hop is skipped when they are not. */
export const hopsOn = ON;
