import type { AppendOutcome, RunAppend, Store } from "@rewind/store";
import { metrics } from "@rewind/telemetry";
import { countLater } from "./count-later.js";

interface Pending {
  append: RunAppend;
  resolve(outcome: AppendOutcome): void;
  reject(error: unknown): void;
}

/**
 * Group commit: appends that arrive while a commit is in flight wait for the next one and share
 * it. Under load many runs' entries reach the disk in one transaction (one fsync), so journaled
 * calls per second can exceed commits per second; with no load an append commits at once.
 */
export class GroupCommitter {
  private queue: Pending[] = [];
  private flushing = false;

  constructor(
    private readonly store: Store,
    private readonly maxBatch = 256,
  ) {}

  append(append: RunAppend): Promise<AppendOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ append, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          const started = performance.now();
          const outcomes = await this.store.commit(batch.map((p) => p.append));
          const seconds = (performance.now() - started) / 1000;
          countLater(() => metrics.commitSeconds.observe({}, seconds));
          batch.forEach((p, i) => p.resolve(outcomes[i] ?? "lease_lost"));
        } catch (error) {
          if (batch.length === 1) batch[0]!.reject(error);
          // One append's failure (two owners racing for one seq) must not sink the others.
          else
            for (const p of batch)
              await this.store
                .commit([p.append])
                .then(([o]) => p.resolve(o ?? "lease_lost"), p.reject);
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}
