import type { CommittedActivation, Store } from "@rewind/store";
import { RunViews } from "./run-views.js";
import type { Sink, SinkBatch } from "./sink.js";

export interface ProjectorOptions {
  store: Store;
  sinks: readonly Sink[];
  /**
   * How often it looks for newly committed entries when it is caught up: after a window that
   * reached the horizon (empty or not), it waits this long before the next; only a window cut by
   * its size limit is followed at once.
   */
  pollMs?: number;
  /** Transactions per window. */
  windowSize?: number;
  log?: (line: string) => void;
  onDelivered?: (sink: string, count: number) => void;
  onFailed?: (sink: string) => void;
}

export interface SinkProgress {
  delivered: number;
  failures: number;
  lastError?: string;
  /** Wall time of the last window that read up to the horizon. */
  caughtUpAt?: number;
}

/**
 * Follows committed journal entries (never the live sandbox) and hands them to each sink, each
 * from its own durable cursor (docs/traces.md). A window is delivered, then the cursor moves:
 * a crash between the two sends that window again, never loses it.
 */
export class Projector {
  private stopped = false;
  private loop: Promise<void> | undefined;
  private readonly wakers = new Set<() => void>();
  readonly progress = new Map<string, SinkProgress>();
  private readonly views: RunViews;
  /**
   * Each sink's cursor as this projector last moved it: read from the store only at the start
   * and when a move found it elsewhere (another projector of the sink), not at every window.
   */
  private readonly cursors = new Map<string, bigint>();

  constructor(private readonly options: ProjectorOptions) {
    this.views = new RunViews(options.store);
    for (const sink of options.sinks) this.progress.set(sink.name, { delivered: 0, failures: 0 });
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const wake of [...this.wakers]) wake();
    await this.loop;
  }

  /** Every sink caught up once at least: what /readyz waits for. */
  get ready(): boolean {
    return [...this.progress.values()].every((p) => p.caughtUpAt !== undefined);
  }

  /** One loop per sink: a slow or failing sink (a collector down) holds up no other. */
  private async run(): Promise<void> {
    await Promise.all(this.options.sinks.map((sink) => this.follow(sink)));
  }

  private async follow(sink: Sink): Promise<void> {
    const pollMs = this.options.pollMs ?? 200;
    while (!this.stopped) {
      let busy = false;
      const started = Date.now();
      try {
        // A window read to the horizon is all there was: the next starts pollMs after this one
        // did, rather than windows of a few transactions each read as fast as they come. Each
        // window costs the projector and Postgres the same few statements and an export, however
        // small: under W1 that was most of the projector's CPU per call. Counting the window's
        // own time in the wait keeps the lag it adds under pollMs when windows are slow.
        busy = (await this.window(sink)) === "full";
      } catch (error) {
        const progress = this.progress.get(sink.name)!;
        progress.failures++;
        progress.lastError = (error as Error).message;
        this.options.onFailed?.(sink.name);
        this.options.log?.(`sink ${sink.name}: ${progress.lastError}`);
      }
      if (!busy && !this.stopped)
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            this.wakers.delete(done);
            resolve();
          };
          const timer = setTimeout(done, Math.max(0, pollMs - (Date.now() - started)));
          this.wakers.add(done);
        });
    }
  }

  /** Where the sink's cursor is now; undefined: elsewhere, read it again at the next window. */
  private movedTo(sink: Sink, below: bigint | undefined): void {
    if (below === undefined) this.cursors.delete(sink.name);
    else this.cursors.set(sink.name, below);
  }

  /** One window for one sink; answers whether there was anything in it. */
  async step(sink: Sink): Promise<boolean> {
    return (await this.window(sink)) !== "empty";
  }

  /** One window for one sink: empty, some (read to the horizon), or full (more beyond it). */
  private async window(sink: Sink): Promise<"empty" | "some" | "full"> {
    const { store } = this.options;
    const below = this.cursors.get(sink.name) ?? (await store.ensureProjectionCursor(sink.name));
    const window = await store.projectionWindow(below, this.options.windowSize ?? 200, sink.kinds);
    const progress = this.progress.get(sink.name)!;
    // Nothing committed since (the horizon may still have moved: any transaction takes an xid,
    // this projector's own cursor updates too). The cursor stays: moving it would write a row,
    // and take an xid, at every poll.
    if (window.transactions === 0 && window.activations.length === 0) {
      progress.caughtUpAt = Date.now();
      return "empty";
    }
    const seqs = new Map<string, number[]>();
    const activations = new Map<string, CommittedActivation[]>();
    const { kinds } = sink;
    for (const row of window.rows)
      if (kinds === undefined || kinds.has(row.kind))
        (seqs.get(row.runId) ?? seqs.set(row.runId, []).get(row.runId)!).push(row.seq);
    if (kinds === undefined)
      for (const a of window.activations)
        (activations.get(a.runId) ?? activations.set(a.runId, []).get(a.runId)!).push(a);
    if (seqs.size === 0 && activations.size === 0) {
      // Nothing of it is this sink's: the cursor moves past the window, nothing read or sent.
      const moved = await store.advanceProjectionCursor(sink.name, below, window.nextBelow, 0);
      this.movedTo(sink, moved ? window.nextBelow : undefined);
      return this.reached(progress, window.full);
    }
    const batch: SinkBatch = { runs: [] };
    const runIds = [...new Set([...seqs.keys(), ...activations.keys()])];
    const needed = (runId: string) =>
      Math.max(0, ...(seqs.get(runId) ?? []), ...(activations.get(runId) ?? []).map((a) => a.seq));
    const views = await this.views.getAll(runIds.map((runId) => [runId, needed(runId)]));
    for (const [i, runId] of runIds.entries()) {
      const view = views[i];
      if (view === undefined) continue; // deleted since (retention waits for sinks: a backfill's)
      batch.runs.push({
        view,
        seqs: seqs.get(runId) ?? [],
        activations: activations.get(runId) ?? [],
      });
    }
    let delivered: number | undefined;
    let moved: boolean;
    if (sink.deliverWithCursor !== undefined) {
      delivered = await sink.deliverWithCursor(batch, { from: below, to: window.nextBelow });
      moved = delivered !== undefined;
      delivered ??= 0;
    } else {
      delivered = await sink.deliver(batch);
      moved = await store.advanceProjectionCursor(sink.name, below, window.nextBelow, delivered);
    }
    this.movedTo(sink, moved ? window.nextBelow : undefined);
    progress.delivered += delivered;
    this.options.onDelivered?.(sink.name, delivered);
    return this.reached(progress, window.full);
  }

  /** A window that read up to the horizon caught the sink up (under load, rarely an empty one). */
  private reached(progress: SinkProgress, full: boolean): "some" | "full" {
    if (full) return "full";
    progress.caughtUpAt = Date.now();
    return "some";
  }
}
