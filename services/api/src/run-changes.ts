/**
 * How a long-poll learns that a run may have changed (new journal entries, a new status). The
 * store is always read again afterwards: a change notice is a hint, never data (the journal is the
 * only source of truth), so a lost notice only costs one poll interval.
 */
export interface RunChanges {
  /** Resolves when `runId` may have changed, after `ms`, or when `signal` aborts: whichever is first. */
  next(runId: string, ms: number, signal: AbortSignal): Promise<void>;
}

/** No notices: a long-poll reads the store again every poll interval. */
export const POLL_ONLY: RunChanges = {
  next: (_runId, ms, signal) => waitFor(ms, signal, () => () => {}),
};

/**
 * Change notices within one process: the executor calls `notify(runId)` after it commits entries
 * for a run (as `rewind dev` runs API and worker together). Across processes, leave it out and the
 * API polls, or feed `notify` from a pub/sub channel.
 */
export class LocalRunChanges implements RunChanges {
  private readonly waiting = new Map<string, Set<() => void>>();

  notify(runId: string): void {
    const wakers = this.waiting.get(runId);
    if (wakers === undefined) return;
    this.waiting.delete(runId);
    for (const wake of wakers) wake();
  }

  next(runId: string, ms: number, signal: AbortSignal): Promise<void> {
    return waitFor(ms, signal, (wake) => {
      let wakers = this.waiting.get(runId);
      if (wakers === undefined) this.waiting.set(runId, (wakers = new Set()));
      wakers.add(wake);
      return () => {
        wakers.delete(wake);
        if (wakers.size === 0 && this.waiting.get(runId) === wakers) this.waiting.delete(runId);
      };
    });
  }
}

/** Waits `ms`, or until `subscribe`'s waker is called, or `signal` aborts; cleans up after itself. */
function waitFor(
  ms: number,
  signal: AbortSignal,
  subscribe: (wake: () => void) => () => void,
): Promise<void> {
  if (signal.aborted || ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      unsubscribe();
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    const unsubscribe = subscribe(done);
  });
}
