import type { ApiContext } from "./context.js";

/**
 * Tells the execution side "run R has something to process" (a new run, a signal, a cancel).
 * A doorbell, not a store: the run and its inbox are durable before it rings, and a reconciler
 * re-rings open runs, so a lost ring delays a run but loses nothing.
 */
export interface Doorbell {
  ring(runId: string): void | Promise<void>;
}

/** Rings for a run whose change is already stored; a failing doorbell never fails the request. */
export async function ring(ctx: ApiContext, runId: string): Promise<void> {
  try {
    await ctx.doorbell.ring(runId);
  } catch (error) {
    ctx.log.error(`the doorbell failed for ${runId}; the reconciler will ring it again`, error);
  }
}
