import type { RunRoute, Store } from "@rewind/store";

export interface WakeUpOptions {
  pollMs?: number;
  /** How long a run must sit with no live owner before it counts as stranded (default 2 s)… */
  strandedAfterMs?: number;
  /**
   * …or, if no worker ever took it, how long its first ring may wait in the queue (default
   * 10 s): under load new runs queue for seconds, and ringing them again only adds work.
   */
  unstartedAfterMs?: number;
  now?: () => number;
}

/**
 * Keeps every open run moving when nothing in memory would. It polls for due timers, for inbox
 * items no one has journaled, and for stranded runs (queued or running, but their owner died or
 * handed them back), and rings each of them, routed to its epoch or its holder. Timers are rows:
 * a ten-day sleep survives any number of restarts; a lost ring (a flushed Redis, a ring that landed
 * during an activation) is rung again.
 */
export class WakeUp {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly pollMs: number;
  private readonly strandedAfterMs: number;
  private readonly unstartedAfterMs: number;
  private readonly now: () => number;

  constructor(
    private readonly store: Store,
    private readonly ring: (route: RunRoute) => Promise<void>,
    options: WakeUpOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 500;
    this.strandedAfterMs = options.strandedAfterMs ?? 2_000;
    this.unstartedAfterMs = options.unstartedAfterMs ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * Rings every open run, in pages; resolves when all have been rung once. For a process that
   * knows it is the only executor (after a crash, in-flight calls run again, timers re-arm).
   */
  async recover(): Promise<number> {
    let after = "";
    let count = 0;
    for (;;) {
      const page = await this.store.openRuns(500, after);
      if (page.length === 0) return count;
      await this.ringAll(page.map((run) => run.id));
      count += page.length;
      after = page[page.length - 1]!.id;
    }
  }

  start(): void {
    const tick = async () => {
      if (this.stopped) return;
      try {
        const [due, inbox, stranded] = await Promise.all([
          this.store.dueTimers(this.now(), 1000),
          this.store.runsWithPendingInbox(1000),
          this.store.strandedRuns(1000, {
            idleMs: this.strandedAfterMs,
            unstartedMs: this.unstartedAfterMs,
          }),
        ]);
        await this.ringAll([...due.map((timer) => timer.runId), ...inbox, ...stranded]);
      } catch {
        // the store or the queue is unreachable: the next tick tries again
      }
      if (!this.stopped) {
        this.timer = setTimeout(() => void tick(), this.pollMs);
        this.timer.unref();
      }
    };
    void tick();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async ringAll(runIds: readonly string[]): Promise<void> {
    const unique = [...new Set(runIds)];
    if (unique.length === 0) return;
    const routes = await this.store.routes(unique);
    await Promise.all(routes.map((route) => this.ring(route)));
  }
}
