import type { ScriptSandbox } from "@rewind/sandbox";
import { metrics } from "@rewind/telemetry";
import type { HotRun } from "./hot-run.js";

export interface HotRunBounds {
  /** At most this many hot runs (default 10,000)… */
  maxRuns?: number;
  /** …and at most this much sandbox heap (default 1 GiB). */
  maxBytes?: number;
}

/**
 * The runs alive in this process, bounded by count and by the sandboxes' heap in bytes. Runs
 * share isolates, so a run's share is estimated as the heap over the runs alive in them; past a
 * bound, the least recently active idle runs are chosen to leave (and be replayed cold later).
 */
export class HotRuns extends Map<string, HotRun> {
  private heapCheckedAt = -Infinity;

  constructor(
    private readonly sandbox: ScriptSandbox,
    private readonly bounds: HotRunBounds,
    private readonly now: () => number,
  ) {
    super();
  }

  /** The idle runs to evict now to be within bounds (none, usually). */
  overflow(): HotRun[] {
    const maxRuns = this.bounds.maxRuns ?? 10_000;
    // The heap shrinks only when V8 collects: look at most once a second so a heap that has not
    // caught up with the last evictions does not evict more.
    if (this.now() - this.heapCheckedAt < 1000 && this.size <= maxRuns) return [];
    this.heapCheckedAt = this.now();
    const heap = this.sandbox.heapUsedBytes();
    metrics.hotHeapBytes.set(heap);
    const maxBytes = this.bounds.maxBytes ?? 1024 ** 3;
    const overCount = this.size - maxRuns;
    const perRun = heap / Math.max(1, this.sandbox.liveRuns);
    const overBytes = heap > maxBytes ? Math.ceil((heap - maxBytes) / perRun) : 0;
    const excess = Math.max(overCount, overBytes);
    if (excess <= 0) return [];
    const limit = overBytes >= overCount ? "bytes" : "count";
    const idle = [...this.values()]
      .filter((run) => run.idle)
      .sort((a, b) => a.lastActive - b.lastActive)
      .slice(0, excess);
    metrics.evictions.inc({ limit }, idle.length);
    return idle;
  }
}
