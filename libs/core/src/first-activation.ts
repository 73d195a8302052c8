import type { RunStartedEntry } from "./entries.js";

/**
 * What a new run's first ring carries besides its id: enough for a worker to make the run's
 * sandbox context while it takes the lease and reads the journal, instead of after (issue 18:
 * the start's hops). A hint, never data: the worker uses the context only if the journal it
 * reads holds exactly this run.started and nothing after it. Never the input: a ring lives in
 * Redis, where a namespace's sealed values must not appear in the clear.
 */
export type FirstActivation = Pick<
  RunStartedEntry,
  "namespace" | "scriptHash" | "seed" | "at" | "epoch"
>;

/** The hint for a run about to be rung for the first time. */
export function firstActivationOf(started: RunStartedEntry): FirstActivation {
  const { namespace, scriptHash, seed, at, epoch } = started;
  return { namespace, scriptHash, seed, at, epoch };
}

/** Whether `started` is the run the hint was made for (a journal read after the ring). */
export function startedAsHinted(started: RunStartedEntry, hint: FirstActivation): boolean {
  return (
    started.parent === undefined &&
    started.namespace === hint.namespace &&
    started.scriptHash === hint.scriptHash &&
    started.seed === hint.seed &&
    started.at === hint.at &&
    started.epoch === hint.epoch
  );
}
