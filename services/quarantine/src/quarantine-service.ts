import type { JournalEntry } from "@rewind/core";
import { findEpoch } from "@rewind/sandbox";
import type { Lease, QuarantineRequest, RunAppend, Store } from "@rewind/store";
import { metrics, runFields } from "@rewind/telemetry";

/** Where a released run's activation goes: its (new) epoch's workers. */
export interface ReleaseDoorbell {
  ring(route: { runId: string; epoch: number; leases?: number }): void | Promise<void>;
}

export interface QuarantineServiceOptions {
  store: Store;
  doorbell: ReleaseDoorbell;
  /** This process's lease owner name: unique per process incarnation. */
  owner: string;
  /** How often it looks for requests (default 1 s); `poke()` looks at once. */
  pollMs?: number;
  /** How often the quarantine gauge is read from the store (default 15 s). */
  gaugeEveryMs?: number;
  leaseTtlMs?: number;
  /**
   * After it commits an entry for a run (`ended`: the commit ended it, a give-up): clients
   * waiting on that run (its result, its journal stream) learn of it at once.
   */
  onCommitted?: (runId: string, ended: boolean) => void;
  /** Where its lines go; a line about a run comes with its fields (runFields). */
  log?: (line: string, fields?: object) => void;
  now?: () => number;
}

/**
 * The quarantine service. Workers quarantine runs (a run.quarantined entry with the divergence
 * report); operators ask, through the API, to release a run or to give up on it, and the API
 * writes the request to the run's inbox. This service is the only one that acts on those
 * requests: like a worker it takes the run's lease (only the owner of a run's lease appends to
 * its journal), then in one fenced commit appends run.released (who, which epoch; the run becomes
 * queued on that epoch) or run.failed (code GIVEN_UP, who, why), consuming the requests. Then it
 * rings the doorbell for a released run. Crash-only: a request is consumed by the commit that
 * acts on it, so a restart acts on it at most once; a run released before a crash and not yet
 * rung is found by the reconciler (queued, no lease).
 */
export class QuarantineService {
  private readonly pollMs: number;
  private readonly leaseTtlMs: number;
  private readonly now: () => number;
  private readonly log: (line: string, fields?: object) => void;
  private timer: NodeJS.Timeout | undefined;
  private gaugeTimer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;

  constructor(private readonly options: QuarantineServiceOptions) {
    this.pollMs = options.pollMs ?? 1_000;
    this.leaseTtlMs = options.leaseTtlMs ?? 30_000;
    this.now = options.now ?? Date.now;
    this.log = options.log ?? (() => {});
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.poke();
    const gauge = () => {
      void this.refreshGauge().catch(() => {}); // the store is unreachable: next time
      this.gaugeTimer = setTimeout(gauge, this.options.gaugeEveryMs ?? 15_000);
      this.gaugeTimer.unref();
    };
    gauge();
  }

  /** Look for requests now (the API calls it after writing one, in the same process). */
  poke(): void {
    if (this.stopped) return;
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = this.processPending()
      .then(
        () => undefined,
        (error: unknown) =>
          this.log(`quarantine: could not act on requests, retrying: ${(error as Error).message}`),
      )
      .finally(() => {
        this.running = undefined;
        if (this.stopped) return;
        if (this.again) {
          this.again = false;
          this.poke();
          return;
        }
        this.timer = setTimeout(() => this.poke(), this.pollMs);
        this.timer.unref();
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.gaugeTimer);
    await this.running;
  }

  /** Acts on every pending request once; returns how many runs were released or given up. */
  async processPending(): Promise<number> {
    const requests = await this.options.store.pendingQuarantineRequests(500);
    const byRun = new Map<string, QuarantineRequest[]>();
    for (const request of requests) {
      const list = byRun.get(request.runId) ?? [];
      list.push(request);
      byRun.set(request.runId, list);
    }
    let acted = 0;
    for (const [runId, list] of byRun) if (await this.handle(runId, list)) acted++;
    return acted;
  }

  /** Quarantined runs by epoch and reason, open runs by epoch: gauges for dashboards and alerts. */
  async refreshGauge(): Promise<void> {
    const counts = await this.options.store.quarantineCounts();
    metrics.quarantinedRuns.reset();
    for (const { epoch, reason, runs } of counts)
      metrics.quarantinedRuns.set({ epoch: String(epoch), reason }, runs);
    // And every open run by epoch: runs of an epoch no live worker supports wait in its queue.
    const open = await this.options.store.openRunsByEpoch();
    metrics.epochOpenRuns.reset();
    for (const { epoch, status, runs } of open)
      metrics.epochOpenRuns.set({ epoch: String(epoch), status }, runs);
  }

  private async handle(runId: string, requests: QuarantineRequest[]): Promise<boolean> {
    const { store } = this.options;
    const lease = await store.acquireLease(runId, this.options.owner, this.leaseTtlMs);
    if (lease === undefined) {
      // Ended, or someone holds it: a worker running it (released already: the requests are
      // moot), or one that is just handing it back after quarantining it (try again later).
      const run = await store.getRun(runId);
      if (run !== undefined && run.status !== "quarantined")
        await this.dismiss(runId, requests, run.lastSeq);
      return false;
    }
    try {
      return await this.act(lease, requests);
    } finally {
      await store.releaseLease(lease).catch(() => {});
    }
  }

  private async act(lease: Lease, requests: QuarantineRequest[]): Promise<boolean> {
    const { store } = this.options;
    const run = await store.getRun(lease.runId);
    const [last] = await store.readJournal(lease.runId, lease.lastSeq);
    // While a run is quarantined nothing is appended after its run.quarantined entry: that
    // entry's seq is the quarantine every request names.
    if (run?.status !== "quarantined" || last?.kind !== "run.quarantined") {
      await this.dismiss(lease.runId, requests, lease.lastSeq);
      return false;
    }
    const current = requests.filter((r) => r.quarantineSeq === last.seq);
    const moot = requests.filter((r) => r.quarantineSeq !== last.seq);
    const first = current[0];
    if (first === undefined) {
      await this.dismiss(lease.runId, moot, lease.lastSeq);
      return false;
    }
    const seq = lease.lastSeq + 1;
    const at = Math.max(this.now(), last.at);
    // The oldest request decides; every other one about this run is consumed with it.
    const append: Omit<RunAppend, "entries" | "status"> = {
      lease,
      afterSeq: lease.lastSeq,
      inboxConsumed: requests.map((r) => ({ id: r.id, seq })),
    };
    if (first.action === "release") {
      const epoch = first.epoch ?? run.epoch;
      if (findEpoch(epoch) === undefined) {
        this.log(
          `quarantine: ${first.by} asked to release run ${run.id} onto epoch ${epoch}, which this build does not know; the request is dropped`,
        );
        await this.dismiss(lease.runId, [first], lease.lastSeq);
        return false;
      }
      const entry: JournalEntry = { seq, kind: "run.released", at, by: first.by, epoch };
      const outcome = await store.commitRelease(
        { ...append, entries: [entry], status: "queued" },
        epoch,
      );
      if (outcome !== "ok") return false; // fenced: someone else moved the run
      metrics.quarantineReleases.inc({ epoch: String(epoch) });
      this.options.onCommitted?.(run.id, false);
      this.log(
        `quarantine: run ${run.id} released by ${first.by} onto epoch ${epoch}`,
        runFields(run.id, seq, run.traceparent),
      );
      await store.releaseLease(lease).catch(() => {});
      // epoch routing: the run's row names its new epoch, so the ring goes to those workers.
      await Promise.resolve(
        this.options.doorbell.ring({ runId: run.id, epoch, leases: lease.token }),
      ).catch((error: unknown) =>
        this.log(
          `quarantine: the doorbell failed for ${run.id} (the reconciler rings it again): ${(error as Error).message}`,
        ),
      );
      return true;
    }
    const reason = first.reason ?? "no reason given";
    const entry: JournalEntry = {
      seq,
      kind: "run.failed",
      at,
      error: {
        name: "RewindError",
        code: "GIVEN_UP",
        message:
          `${first.by} gave up on this run while it was quarantined (the report is the ` +
          `run.quarantined entry at seq ${last.seq}): ${reason}. To carry its work on, fork it`,
      },
      by: first.by,
    };
    const [outcome] = await store.commit([{ ...append, entries: [entry], status: "failed" }]);
    if (outcome !== "ok") return false;
    metrics.quarantineGiveUps.inc();
    this.options.onCommitted?.(run.id, true);
    this.log(`quarantine: ${first.by} gave up on run ${run.id}: ${reason}`, runFields(run.id, seq, run.traceparent));
    return true;
  }

  private async dismiss(runId: string, requests: QuarantineRequest[], seq: number) {
    if (requests.length === 0) return;
    await this.options.store.dismissQuarantineRequests(
      runId,
      requests.map((r) => r.id),
      seq,
    );
    metrics.quarantineDismissed.inc(requests.length);
  }
}
