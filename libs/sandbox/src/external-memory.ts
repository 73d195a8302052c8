/**
 * Memory the isolates hold outside their heaps, which isolated-vm's memory limit never sees: a
 * WebAssembly.Memory's pages are V8's own reservation, not the isolate's ArrayBuffer allocator's
 * (its heap statistics, `externally_allocated_size` included, stay at 0 for a touched 1 GiB
 * memory). Estimated from what the process has resident beyond its state before the first
 * isolate, less the isolates' heaps and the process's own heap growth. Meaningful only in a
 * process that does nothing but run scripts: a sandbox process.
 */
export class ExternalMemory {
  private baselineRss = -1;
  private baselineHeap = 0;
  private lastCheck = 0;

  constructor(private readonly limitBytes: number) {}

  /** Before the first isolate: what the process has resident on its own. */
  calibrate(): void {
    if (this.baselineRss >= 0) return;
    const { rss, heapTotal } = process.memoryUsage();
    this.baselineRss = rss;
    this.baselineHeap = heapTotal;
  }

  /**
   * The estimate in bytes after an activation that began at `startedAt` (performance.now()), or 0
   * when it cannot be over the limit. Reading the resident size costs a system call: it is read
   * after an activation long enough to have touched much memory, and otherwise every 100 ms.
   */
  afterActivation(startedAt: number, isolateBytes: () => number): number {
    const now = performance.now();
    if (this.baselineRss < 0 || (now - startedAt < 2 && now - this.lastCheck < 100)) return 0;
    this.lastCheck = now;
    return this.estimate(this.limitBytes, isolateBytes);
  }

  /**
   * After isolates were disposed to free their memory: what is still resident beyond the estimate
   * is no isolate's (memory the allocator kept, say), and becomes part of the baseline, so that it
   * is never charged to a run again.
   */
  settle(isolateBytes: () => number): void {
    if (this.baselineRss < 0) return;
    const { rss, heapTotal } = process.memoryUsage();
    const ownGrowth = Math.max(0, heapTotal - this.baselineHeap);
    const left = rss - this.baselineRss - isolateBytes() - ownGrowth;
    if (left > 0) this.baselineRss += left;
  }

  /** The estimate when it may be `atLeast` bytes or more, else 0. */
  estimate(atLeast: number, isolateBytes: () => number): number {
    if (this.baselineRss < 0) return 0;
    const rss = process.memoryUsage.rss();
    // The isolates' heaps and this process's own growth come off it: never more than this.
    if (rss - this.baselineRss <= atLeast) return 0;
    const ownGrowth = Math.max(0, process.memoryUsage().heapTotal - this.baselineHeap);
    const external = rss - this.baselineRss - isolateBytes() - ownGrowth;
    return external > atLeast ? external : 0;
  }
}
