import { RewindError } from "@rewind/core";
import type { CompiledScript, ScriptSandbox } from "@rewind/sandbox";
import type { EpochCheck, EpochCheckReport, EpochRunVerdict, RunRoute, Store } from "@rewind/store";
import { checkReplay } from "./replay-check.js";

export interface EpochMigratorOptions {
  store: Store;
  /**
   * The sandbox this worker runs its epochs' scripts in: the check replays each run exactly as a
   * cold activation here would, with this runtime's V8 and guest runtime.
   */
  sandbox: ScriptSandbox;
  /** The worker's lease owner name; the checker's leases carry a suffix of their own. */
  owner: string;
  /** The epochs this worker runs: it takes only checks onto one of them. */
  epochs: readonly number[];
  /** Rings a moved run on its new epoch's queue. */
  ring: (route: RunRoute) => Promise<void>;
  /** How often it looks for checks (default 2 s). */
  pollMs?: number;
  leaseTtlMs?: number;
  /** A check whose taker said nothing for this long is taken again (default 60 s). */
  staleMs?: number;
  log?: (line: string) => void;
}

const PAGE = 100;

/**
 * Moves open runs from an older epoch onto this worker's, as an operator asked (`rewind epochs
 * migrate N --to M`). The API only records the request: the replay that decides must run on
 * epoch M's runtime with M's guest runtime, which is this worker's, never the API's own Node.
 *
 * For each open run of N: take its lease (a run some worker holds is busy: it is skipped, and a
 * later check can move it), replay its journal here calling nothing, and if it matches, move it
 * in one compare-and-set statement that applies only while the journal still ends at the seq
 * replayed and the lease is still this checker's (Store.moveRunEpoch records who and which seq).
 * A run that diverges stays on N for N's workers, with the divergence in the report. Crash-only:
 * a check whose taker dies is taken again; what it moved is no longer of N.
 */
export class EpochMigrator {
  private readonly checker: string;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = true;
  /** stop() was called: a check under way is left for another taker. */
  private stopping = false;

  constructor(private readonly options: EpochMigratorOptions) {
    this.checker = `${options.owner}:epoch-check`;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.stopping = false;
    this.poke();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private poke(): void {
    if (this.stopped || this.running !== undefined) return;
    this.running = this.runPending()
      .catch((error: unknown) =>
        this.log(`epoch check: could not go on, retrying: ${(error as Error).message}`),
      )
      .finally(() => {
        this.running = undefined;
        if (this.stopped) return;
        this.timer = setTimeout(() => this.poke(), this.options.pollMs ?? 2_000);
        this.timer.unref();
      });
  }

  /** Runs every check waiting for this worker's epochs; returns how many it finished. */
  async runPending(): Promise<number> {
    const { store, epochs } = this.options;
    let finished = 0;
    for (;;) {
      const check = await store.takeEpochCheck(
        this.checker,
        epochs,
        this.options.staleMs ?? 60_000,
      );
      if (check === undefined) return finished;
      const report = await this.run(check);
      await store.finishEpochCheck(check.id, this.checker, report);
      const moved = report.runs.filter((r) => r.verdict === "moved").length;
      this.log(
        `epoch check ${check.id}: ${report.runs.length} run(s) of epoch ${check.from} checked on epoch ` +
          `${check.to}, ${check.dryRun ? "dry run" : `${moved} moved`}`,
      );
      finished++;
    }
  }

  private async run(check: EpochCheck): Promise<EpochCheckReport> {
    const runs: EpochRunVerdict[] = [];
    let after = "";
    for (;;) {
      const page = await this.options.store.openRunsOfEpoch(
        check.namespace,
        check.from,
        PAGE,
        after,
      );
      for (const runId of page) {
        // Stopping: the check is left unfinished, and taken again once this taker is silent.
        if (this.stopping) throw new Error(`stopped during check ${check.id}; it is taken again`);
        runs.push(await this.checkRun(check, runId));
        await this.options.store.touchEpochCheck(check.id, this.checker);
      }
      if (page.length < PAGE) break;
      after = page.at(-1)!;
    }
    return {
      checkedBy: this.options.owner,
      runtime: `Node ${process.version} (V8 ${process.versions.v8})`,
      runs,
    };
  }

  private async checkRun(check: EpochCheck, runId: string): Promise<EpochRunVerdict> {
    const { store } = this.options;
    const lease = await store.acquireLease(runId, this.checker, this.options.leaseTtlMs ?? 30_000, {
      epochs: [check.from],
    });
    if (lease === undefined)
      return {
        runId,
        verdict: "skipped",
        message:
          `a worker holds it (or it ended, or moved) while it was checked: it stays on epoch ` +
          `${check.from}; check again once its activation is over`,
      };
    let moved = false;
    try {
      const run = await store.getRun(runId);
      if (run === undefined || run.epoch !== check.from)
        return { runId, verdict: "skipped", message: `it is no longer of epoch ${check.from}` };
      if (run.status === "quarantined")
        return {
          runId,
          verdict: "skipped",
          message:
            `it is quarantined: release it onto epoch ${check.to} once its report is understood ` +
            `(rewind quarantine release ${runId} --epoch ${check.to})`,
        };
      const journal = await store.readJournal(runId);
      const checkedSeq = journal.length;
      let replay: Awaited<ReturnType<typeof checkReplay>>;
      try {
        replay = await checkReplay(this.options.sandbox, await this.script(run), journal, check.to);
      } catch (error) {
        return {
          runId,
          verdict: "skipped",
          message: `its replay could not be completed here (${(error as Error).message}): it stays on epoch ${check.from}`,
        };
      }
      if (!replay.matches)
        return {
          runId,
          verdict: "diverges",
          checkedSeq,
          divergedAt: replay.divergence.seq,
          message: replay.message,
        };
      if (check.dryRun) return { runId, verdict: "would-move", checkedSeq };
      const outcome = await store.moveRunEpoch(lease, {
        from: check.from,
        to: check.to,
        checkedSeq,
        by: check.requestedBy,
        checkId: check.id,
      });
      if (outcome === "changed")
        return {
          runId,
          verdict: "skipped",
          message: `its journal grew past seq ${checkedSeq} while it was checked: it stays on epoch ${check.from}; check again`,
        };
      moved = true;
      return { runId, verdict: "moved", checkedSeq };
    } finally {
      await store.releaseLease(lease).catch(() => {});
      // Its next activation (or the one it waited for) goes to the new epoch's workers now; a lost
      // ring is found by the reconciler, and a waiting run's timer rings it when due.
      if (moved)
        await this.options
          .ring({ runId, epoch: check.to, leases: lease.token })
          .catch((error: unknown) =>
            this.log(`epoch check: the doorbell failed for ${runId}: ${(error as Error).message}`),
          );
    }
  }

  private async script(run: { namespace: string; scriptHash: string }): Promise<CompiledScript> {
    const stored = await this.options.store.getScript(run.namespace, run.scriptHash);
    if (stored === undefined)
      throw new RewindError("NOT_FOUND", `Script ${run.scriptHash} is not in the store`);
    return stored;
  }

  private log(line: string): void {
    this.options.log?.(line);
  }
}
