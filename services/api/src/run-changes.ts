/**
 * How a long-poll or a stream learns that a run may have changed (new journal entries, a new
 * status). The store is always read again afterwards: a change notice is a hint, never data (the
 * journal is the only source of truth), so a lost notice only costs one backstop poll.
 */
export interface RunChanges {
  /**
   * Starts listening for changes of `runId` for about `ms` (with `endOnly`, notices may be kept
   * to the commit that ends the run). Resolves once a change committed from now on is sure to be
   * heard: read the store after it, never before, so nothing falls between.
   */
  watch(runId: string, ms: number, endOnly?: boolean): Promise<RunWatch>;
}

export interface RunWatch {
  /**
   * Resolves when the run may have changed since the watch began or since the last `next`
   * (at once if it already did), after `ms`, or when `signal` aborts: whichever is first.
   */
  next(ms: number, signal: AbortSignal): Promise<void>;
  close(): void;
}

/** No notices: a long-poll reads the store again every poll interval. */
export const POLL_ONLY: RunChanges = {
  watch: () =>
    Promise.resolve({
      next: (ms, signal) => waitFor(ms, signal, () => () => {}),
      close() {},
    }),
};

/**
 * The waiters of one process, by run. Notices come from `notify(runId)`: in `rewind dev` the
 * executor calls it after it commits a run's entries (same process); across processes
 * `RedisRunChanges` calls it for each run a notice on the Redis channel names.
 */
export class LocalRunChanges implements RunChanges {
  private readonly watches = new Map<string, Set<Watch>>();

  notify(runId: string): void {
    for (const watch of this.watches.get(runId) ?? []) watch.changed();
  }

  /** How many runs someone in this process waits on (for tests and metrics). */
  get watched(): number {
    return this.watches.size;
  }

  watch(runId: string, _ms?: number, _endOnly?: boolean): Promise<RunWatch> {
    return Promise.resolve(this.open(runId));
  }

  protected open(runId: string): RunWatch {
    let watches = this.watches.get(runId);
    if (watches === undefined) this.watches.set(runId, (watches = new Set()));
    const watch = new Watch(() => {
      watches.delete(watch);
      if (watches.size === 0 && this.watches.get(runId) === watches) this.watches.delete(runId);
    });
    watches.add(watch);
    return watch;
  }
}

/** One waiter: remembers a change that arrives while no one is inside `next`. */
class Watch implements RunWatch {
  private dirty = false;
  private wake: (() => void) | undefined;

  constructor(private readonly remove: () => void) {}

  changed(): void {
    this.dirty = true;
    this.wake?.();
  }

  next(ms: number, signal: AbortSignal): Promise<void> {
    if (this.dirty) {
      this.dirty = false;
      return Promise.resolve();
    }
    return waitFor(ms, signal, (wake) => {
      this.wake = wake;
      return () => {
        this.wake = undefined;
        this.dirty = false;
      };
    });
  }

  close(): void {
    this.wake?.();
    this.remove();
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
