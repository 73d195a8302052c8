import type { RunStartedEntry } from "./entries.js";

/**
 * What a new run's first ring carries besides its id: enough for a worker to make the run's
 * sandbox context while it takes the lease and reads the journal, instead of after (issue 18:
 * the start's hops). A hint, never trusted: the worker uses the context only if the journal it
 * reads holds exactly this run.started and nothing after it, or, with `started`, commits what
 * it ran only if the store holds that very start. Never a sealed namespace's input: a ring lives
 * in Redis, where sealed values must not appear in the clear.
 */
export type FirstActivation = Pick<
  RunStartedEntry,
  "namespace" | "scriptHash" | "seed" | "at" | "epoch"
> & {
  /**
   * The whole run.started, when it may travel in the clear (its namespace seals nothing and its
   * input is inline in the row): the worker then runs the top level at once, before it has read
   * anything, and takes the lease in the run's first commit, which the store makes only while
   * no one else ever took the run and its stored start is this one (RunAppend.claim): data the
   * worker runs, but never trusted. Otherwise the usual path reads the journal.
   */
  started?: RunStartedEntry;
  /** The start request's W3C traceparent, with `started`: the run's trace, unread (docs/traces.md). */
  traceparent?: string;
};

/**
 * The hint for a run about to be rung for the first time; `inClear`, carrying its whole start
 * (only for one stored in the clear, never a fork's: a fork's first load reads its parent).
 */
export function firstActivationOf(
  started: RunStartedEntry,
  { inClear = false, traceparent }: { inClear?: boolean; traceparent?: string | undefined } = {},
): FirstActivation {
  const { namespace, scriptHash, seed, at, epoch } = started;
  const hint: FirstActivation = { namespace, scriptHash, seed, at, epoch };
  if (!inClear || started.parent !== undefined) return hint;
  return { ...hint, started, ...(traceparent === undefined ? {} : { traceparent }) };
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
