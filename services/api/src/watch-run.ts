import type { RunRecord } from "@rewind/store";
import type { ApiContext } from "./context.js";
import type { RunWatch } from "./run-changes.js";
import { findRun } from "./run-view.js";

/**
 * Long-poll: reads the run until `settled(run)` holds, `waitMs` has passed, or the request is
 * abandoned (client gone, API closing), and returns the last read. Each round trusts only the
 * store; a change notice merely ends the pause between reads early, and the backstop poll
 * (`ctx.pollMs`) bounds what a lost notice costs.
 */
export async function watchRun(
  ctx: ApiContext,
  namespace: string,
  runId: string,
  waitMs: number,
  signal: AbortSignal,
  settled: (run: RunRecord) => boolean,
  /** Only the run's end settles the wait: notices of the commits before it are not needed. */
  endOnly = false,
): Promise<RunRecord> {
  if (waitMs <= 0) return findRun(ctx.store, namespace, runId);
  const deadline = Date.now() + waitMs;
  // Watching before the first read: a commit between that read and the wait is still heard.
  const watch = await ctx.changes.watch(runId, waitMs, endOnly);
  try {
    const first = await findRun(ctx.store, namespace, runId);
    return await readUntil(ctx, watch, { namespace, runId, deadline, signal, settled }, first);
  } finally {
    watch.close();
  }
}

export interface Reads {
  namespace: string;
  runId: string;
  /** When to answer with the last read, settled or not (ms since the Unix epoch). */
  deadline: number;
  signal: AbortSignal;
  settled: (run: RunRecord) => boolean;
}

/**
 * The reads of a long-poll whose watch is open (opened before the run could change), after the
 * first read `run`; without one, the run is known to be unsettled (a start that has just stored
 * it), and the first read waits for a notice.
 */
export async function readUntil(
  ctx: ApiContext,
  watch: RunWatch,
  { namespace, runId, deadline, signal, settled }: Reads,
  run?: RunRecord,
): Promise<RunRecord> {
  while ((run === undefined || !settled(run)) && !signal.aborted) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    await watch.next(Math.min(ctx.pollMs, left), signal);
    run = await findRun(ctx.store, namespace, runId);
  }
  return run ?? findRun(ctx.store, namespace, runId);
}
