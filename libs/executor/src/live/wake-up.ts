import type { Store } from "@rewind/store";

/**
 * Keeps every open run moving when nothing in memory would: at start-up it activates every run
 * that has not ended (after a crash, in-flight calls run again and timers are re-armed), and
 * then it polls for due timers and for inbox items no one has journaled, ringing those runs
 * again. Timers are rows: a ten-day sleep survives any number of restarts; a lost ring (a
 * flushed Redis, a ring that landed during an activation) is rung again.
 */
export class WakeUp {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly activate: (runId: string) => Promise<void>,
    private readonly pollMs = 500,
    private readonly now: () => number = Date.now,
  ) {}

  /** Activates every open run, in pages; resolves when all have been activated once. */
  async recover(): Promise<number> {
    let after = "";
    let count = 0;
    for (;;) {
      const page = await this.store.openRuns(500, after);
      if (page.length === 0) return count;
      await Promise.all(page.map((run) => this.activate(run.id)));
      count += page.length;
      after = page[page.length - 1]!.id;
    }
  }

  start(): void {
    const tick = async () => {
      if (this.stopped) return;
      try {
        const due = await this.store.dueTimers(this.now(), 1000);
        const inbox = await this.store.runsWithPendingInbox(1000);
        for (const runId of new Set([...due.map((timer) => timer.runId), ...inbox]))
          void this.activate(runId);
      } catch {
        // the store is unreachable: the next tick tries again
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
}
