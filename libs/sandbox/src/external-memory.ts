import { openSync, readSync } from "node:fs";
import { getHeapStatistics } from "node:v8";

/**
 * Memory the isolates hold outside their heaps, which isolated-vm's memory limit never sees: a
 * WebAssembly.Memory's pages are V8's own reservation, not the isolate's ArrayBuffer allocator's
 * (its heap statistics, `externally_allocated_size` included, stay at 0 for a touched 1 GiB
 * memory). Estimated from what the process has resident beyond its state before the first
 * isolate, less the isolates' heaps and the process's own heap growth. Meaningful only in a
 * process that does nothing but run scripts: a sandbox process.
 *
 * The estimate is the process's; a run is charged only its own part of it. Activations in a
 * sandbox process run one at a time and nothing else can touch a run's memory, so the growth of
 * the estimate between two readings belongs to the run that executed in between: each run keeps
 * a ledger of that growth (`share`). To keep it so, the estimate is read before an activation of
 * a run other than the one whose activations are still unread, after an activation of 2 ms or
 * more (touching much memory takes longer), and otherwise every 100 ms. A run over the limit
 * fails with its own figure; the process as a whole is held to the limit times its live runs.
 */
export class ExternalMemory {
  private baselineRss = -1;
  private baselineHeap = 0;
  private lastCheck = 0;
  /** Each live run's part of the estimate, in bytes, by run (a script instance). */
  private readonly shares = new Map<object, number>();
  /** The run whose activations since the last reading are not yet charged. */
  private unread: object | undefined;
  /** The resident size at the last full reading, and the estimate it gave. */
  private readRss = 0;
  private readEstimate = 0;
  /** Runs that grew while the process was over its ceiling: they fail next. */
  private readonly pastCeiling = new Set<object>();

  constructor(
    private readonly limitBytes: number,
    private readonly isolateBytes: () => number,
    private readonly liveRuns: () => number,
  ) {}

  /** Before the first isolate: what the process has resident on its own. */
  calibrate(): void {
    if (this.baselineRss >= 0) return;
    this.baselineRss = residentBytes();
    this.baselineHeap = ownHeapBytes();
    this.readRss = this.baselineRss;
    this.readEstimate = 0;
  }

  /**
   * Before an activation of `run`: another run's unread activations are charged to it now, so
   * that what this one grows is measured from here (and is its own even if the activation fails
   * and never reaches `afterActivation`: it is charged as the run leaves).
   */
  beforeActivation(run: object): void {
    if (this.baselineRss < 0) return;
    if (this.unread !== undefined && this.unread !== run) this.read();
    this.unread = run;
  }

  /**
   * After an activation of `run` that began at `startedAt` (performance.now()): why it must fail
   * (its own share over the limit, or its growth took the process past its ceiling), or
   * undefined.
   */
  afterActivation(run: object, startedAt: number): ExternalVerdict | undefined {
    if (this.baselineRss < 0) return undefined;
    this.unread = run;
    const now = performance.now();
    if (now - startedAt >= 2 || now - this.lastCheck >= 100) this.read();
    const share = this.shares.get(run) ?? 0;
    if (share > this.limitBytes) return { bytes: share, ceiling: 0 };
    if (this.pastCeiling.has(run)) return { bytes: this.readEstimate, ceiling: this.ceiling() };
    return undefined;
  }

  /**
   * The run left (its context released, or its isolate gone): its activations are charged, its
   * entry dropped. Returns its share: what it may have left resident.
   */
  leave(run: object): number {
    if (this.unread === run) this.read();
    const share = this.shares.get(run) ?? 0;
    this.shares.delete(run);
    this.pastCeiling.delete(run);
    return share;
  }

  /** Charges the unread activations now: before isolates are disposed, which changes the size. */
  flush(): void {
    if (this.unread !== undefined) this.read();
  }

  /**
   * After isolates were disposed to free their memory: what is still resident beyond the live
   * runs' shares is no run's (memory the allocator kept, say), and becomes part of the baseline,
   * so that it is never charged to a run again.
   */
  settle(): void {
    if (this.baselineRss < 0) return;
    let owned = 0;
    for (const share of this.shares.values()) owned += share;
    const rss = residentBytes();
    const left = this.fullEstimate(rss) - owned;
    if (left > 0) this.baselineRss += left;
    this.readRss = rss;
    this.readEstimate = this.fullEstimate(rss);
    this.unread = undefined;
  }

  /**
   * What the last reading saw beyond the live runs' shares, in bytes: memory runs that left did
   * not free yet (a released context's, until its isolate collects it).
   */
  get unownedBytes(): number {
    return this.readEstimate - this.chargedBytes;
  }

  /** The live runs' shares together, in bytes (for tests and metrics). */
  get chargedBytes(): number {
    let total = 0;
    for (const share of this.shares.values()) total += share;
    return total;
  }

  /**
   * One reading: the resident size costs a read of /proc/self/statm (about 2 µs); the estimate's
   * other terms (each isolate's heap statistics, several µs apiece) only once it moved by
   * `FULL_READ_BYTES` since the last full reading. What moved less waits for a later reading, which
   * may charge it to another run: at most that much each time.
   */
  private read(): void {
    const run = this.unread;
    this.unread = undefined;
    this.lastCheck = performance.now();
    if (run === undefined) return;
    const rss = residentBytes();
    if (Math.abs(rss - this.readRss) < FULL_READ_BYTES) return;
    const estimate = this.fullEstimate(rss);
    const growth = estimate - this.readEstimate;
    this.readRss = rss;
    this.readEstimate = estimate;
    // A drop is credited, never below 0: the run's memory collected, or a released one's (which
    // the run may then use unseen: the ceiling bounds that).
    this.shares.set(run, Math.max(0, (this.shares.get(run) ?? 0) + growth));
    if (growth > 0 && estimate > this.ceiling()) this.pastCeiling.add(run);
  }

  private fullEstimate(rss: number): number {
    const ownGrowth = Math.max(0, ownHeapBytes() - this.baselineHeap);
    return rss - this.baselineRss - this.isolateBytes() - ownGrowth;
  }

  /** What the process may hold outside the heaps: every live run its limit. */
  private ceiling(): number {
    return this.limitBytes * Math.max(1, this.liveRuns());
  }
}

/** Why a run fails: its own `bytes` over the limit, or (ceiling > 0) the process's over that. */
export interface ExternalVerdict {
  bytes: number;
  ceiling: number;
}

/** Below this change of the resident size, a reading does not compute the whole estimate. */
const FULL_READ_BYTES = 1024 * 1024;

/**
 * The process's own heap (not the isolates'), as process.memoryUsage().heapTotal: read from V8
 * alone in 0.8 µs, where memoryUsage also reads the resident size from /proc (13 µs here).
 */
function ownHeapBytes(): number {
  return getHeapStatistics().total_heap_size;
}

let statm: { fd: number; buffer: Buffer; pageSize: number } | null | undefined;

/**
 * The process's resident size in bytes. `process.memoryUsage.rss()` opens, reads and closes
 * /proc/self/stat (about 10 µs); one read of /proc/self/statm on a file kept open costs about 2.
 */
function residentBytes(): number {
  if (statm === undefined) {
    try {
      const fd = openSync("/proc/self/statm", "r");
      statm = { fd, buffer: Buffer.alloc(128), pageSize: 1 };
      const pages = statmPages(statm.fd, statm.buffer);
      statm.pageSize = 2 ** Math.round(Math.log2(process.memoryUsage.rss() / pages));
    } catch {
      statm = null; // not Linux
    }
  }
  if (statm === null) return process.memoryUsage.rss();
  return statmPages(statm.fd, statm.buffer) * statm.pageSize;
}

/** The second field of /proc/self/statm: resident pages. */
function statmPages(fd: number, buffer: Buffer): number {
  const n = readSync(fd, buffer, 0, buffer.length, 0);
  let i = buffer.indexOf(0x20);
  let pages = 0;
  for (i++; i < n; i++) {
    const digit = buffer[i]! - 0x30;
    if (digit < 0 || digit > 9) break;
    pages = pages * 10 + digit;
  }
  return pages;
}
