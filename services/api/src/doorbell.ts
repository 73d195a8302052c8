import type { FirstActivation } from "@rewind/core";
import type { RunRecord } from "@rewind/store";
import type { ApiContext } from "./context.js";

/**
 * Tells the execution side "run R has something to process" (a new run, a signal, a cancel).
 * A doorbell, not a store: the run and its inbox are durable before it rings, and a reconciler
 * re-rings open runs, so a lost ring delays a run but loses nothing.
 */
export interface Doorbell {
  ring(route: RunRoute): void | Promise<void>;
}

/** Where the activation goes: the run's epoch's workers, or the worker holding it hot. */
export interface RunRoute {
  runId: string;
  epoch: number;
  holder?: string;
  /** How many times the run's lease was taken: see @rewind/queue's Activation.leases. */
  leases?: number;
  /** A new run's first ring: what a worker may begin with before reading its journal. */
  first?: FirstActivation;
}

/** Rings for a run whose change is already stored; a failing doorbell never fails the request. */
export async function ring(ctx: ApiContext, route: RunRoute): Promise<void> {
  try {
    await ctx.doorbell.ring(route);
  } catch (error) {
    ctx.log.error(
      `the doorbell failed for ${route.runId}; the reconciler will ring it again`,
      error,
    );
  }
}

export function routeOf(run: RunRecord): RunRoute {
  return {
    runId: run.id,
    epoch: run.epoch,
    leases: run.leases,
    ...(run.holder !== undefined ? { holder: run.holder } : {}),
  };
}
