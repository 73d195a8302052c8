import { setTimeout as sleep } from "node:timers/promises";
import {
  RewindError,
  limitDefaults,
  type LimitName,
  startedAsHinted,
  type CallEntry,
  type ErrorData,
  type FirstActivation,
  type Json,
  type JournalEntry,
  type RunStartedEntry,
} from "@rewind/core";
import { RunEngine } from "@rewind/journal";
import {
  LiveSliceExceeded,
  ReplaySliceExceeded,
  epochSupport,
  type CompiledScript,
  SandboxLost,
  type ScriptHandle,
} from "@rewind/sandbox";
import {
  ENDED_STATUSES,
  FIRST_CLAIM_TOKEN,
  type Lease,
  type RunAppend,
  type RunStatus,
} from "@rewind/store";
import { invokeTool, outcomeEvent } from "../invoke.js";
import {
  crashLoop,
  storeRefusal,
  storeRefused,
  toolNotFound,
  unsafeToRepeat,
} from "../verdicts.js";
import { adoptRunTrace, hop, metrics } from "@rewind/telemetry";
import { countLater } from "./count-later.js";
import { GroupCommitter } from "./group-commit.js";
import {
  buildVersion,
  quarantineEntry,
  quarantineReason,
  type QuarantineReason,
} from "./quarantine-report.js";
import type { ExecutorOptions, FaultPoint } from "./executor-options.js";
import { HotRun } from "./hot-run.js";
import { HotRuns } from "./hot-runs.js";
import { NamespaceLimitsCache, RunUsage } from "./run-limits.js";
import { armUntil } from "./long-timer.js";
import { CapturePolicyCache } from "../capture/capture-policy-cache.js";
import { firstRedacted, notReplayable } from "../capture/not-replayable.js";

class Crashed extends Error {}

/** How an activation came from the queue (none of it for the executor's own activations). */
export interface Taken {
  /** How long it waited for a worker (its rw_activations row, for the projections). */
  scheduleToStartMs?: number;
  /** A new run's first ring: the script its context can be made from, before the journal is read. */
  first?: FirstActivation;
}

/** A sandbox context made from a first ring's hint while the run was read (see Executor.load). */
interface EarlyContext {
  first: FirstActivation;
  /** Fails as the usual path's would (a script that takes its sandbox process down, say). */
  instance: Promise<ScriptHandle>;
  /** Handed to the replay, which owns it from then on. */
  taken: boolean;
}

/** Events (outcomes, due timers) one activation of a run handles before yielding its turn. */
const EVENTS_PER_TURN = 64;

/** How `Executor.step` journals what it is given (see there). */
interface StepOptions {
  inboxId?: number;
  effects?: boolean;
  more?: boolean;
}

/**
 * Executes runs live against the store: one owner per run (a lease with a fencing token), events
 * processed one at a time per run, each batch of entries committed (group commit across runs)
 * before anything it causes happens. Hot runs stay in memory; a cold run is replayed from its
 * journal. If a commit fails, the hot copy is dropped: the journal, not memory, says where a run is.
 */
export class Executor {
  private readonly hot: HotRuns;
  /** Runs whose inbox may hold something: rung by the doorbell, or just loaded. */
  private readonly inboxDirty = new Set<string>();
  /** Runs that ended here lately: a late activation need not ask the store again. */
  private readonly ended = new Set<string>();
  private readonly chains = new Map<string, Promise<void>>();
  private readonly scripts = new Map<string, Promise<CompiledScript>>();
  /** Runs whose live code once ran longer than a sync slice: their activations stay async. */
  private readonly heavy = new Set<string>();
  /**
   * Calls whose outcome this process owes the journal, by run: in flight, or arrived and not yet
   * journaled. A run rebuilt here must not invoke them again.
   */
  private readonly owedCalls = new Map<string, Set<number>>();
  /**
   * Activations of a run that failed in a row because the store refused what it was to journal
   * (storeRefusal), and what it said: such a run is failed at its next load past the bound,
   * instead of being replayed and refused once a second forever.
   */
  private readonly refusals = new Map<string, { times: number; cause: string }>();
  private readonly committer: GroupCommitter;
  private readonly limits: NamespaceLimitsCache;
  private readonly capture: CapturePolicyCache;
  private readonly leaseTtlMs: number;
  private readonly now: () => number;
  private renewal: NodeJS.Timeout | undefined;
  private readonly maxValueBytes: number;
  /** The determinism epochs this executor replays: its worker takes those epochs' activations. */
  readonly epochs: readonly number[];
  /** Draining: activations from outside are refused; outcomes of calls still in flight are not. */
  private draining = false;
  private closed = false;
  /** Died at a fault point (tests): a dead process does nothing more, queued work included. */
  private crashed = false;

  constructor(private readonly options: ExecutorOptions) {
    this.committer = new GroupCommitter(options.store);
    this.limits = new NamespaceLimitsCache(options.store, {
      ...limitDefaults(),
      ...options.limits,
    });
    this.capture = new CapturePolicyCache(options.store);
    this.leaseTtlMs = options.leaseTtlMs ?? 30_000;
    this.maxValueBytes = options.maxValueBytes ?? options.sandbox.options.maxValueBytes;
    this.epochs = options.epochs ?? epochSupport({ maxValueBytes: this.maxValueBytes }).epochs;
    this.now = options.now ?? Date.now;
    this.hot = new HotRuns(
      options.sandbox,
      { maxRuns: options.maxHotRuns, maxBytes: options.maxHotBytes },
      this.now,
    );
    this.renewal = setInterval(() => void this.renewLeases(), this.leaseTtlMs / 3);
    this.renewal.unref();
  }

  /**
   * The doorbell: run R may have something to process (its inbox is read). Activations of one
   * run never overlap. `internal` activations (a call's outcome, a timer) skip the inbox.
   */
  activate(runId: string, internal = false, taken: Taken = {}): Promise<void> {
    if (this.closed || (this.draining && !internal)) return Promise.resolve();
    if (!internal) this.inboxDirty.add(runId);
    const previous = this.chains.get(runId) ?? Promise.resolve();
    const next = previous
      .then(() => this.timed(runId, internal, taken))
      .catch((error: unknown) => this.failed(runId, error));
    this.chains.set(runId, next);
    void next.then(() => {
      if (this.chains.get(runId) === next) this.chains.delete(runId);
    });
    return next;
  }

  get hotRuns(): number {
    return this.hot.size;
  }

  /**
   * Stops, handing every hot run back. With `graceMs`, first stops taking activations and waits
   * that long for calls in flight to finish and be journaled, so fewer run again elsewhere.
   * Returns the runs handed back with work still to do (calls in flight): ring them, so another
   * worker takes them over now rather than when the reconciler finds them.
   */
  async close(options: { graceMs?: number } = {}): Promise<string[]> {
    this.draining = true;
    const deadline = performance.now() + (options.graceMs ?? 0);
    while (performance.now() < deadline && [...this.hot.values()].some((run) => !run.idle))
      await sleep(20);
    this.closed = true;
    clearInterval(this.renewal);
    await Promise.allSettled([...this.chains.values()]);
    const unfinished: string[] = [];
    for (const run of this.hot.values()) {
      if (!run.idle) unfinished.push(run.runId);
      run.dispose();
      await this.options.store.releaseLease(run.lease).catch(() => {});
    }
    this.hot.clear();
    metrics.hotRuns.set(0);
    return unfinished;
  }

  /** An activation, timed by kind (rewind_executor_activation_duration_seconds). */
  private async timed(runId: string, internal: boolean, taken: Taken): Promise<void> {
    const kind = this.hot.has(runId) ? "hot" : "cold";
    const started = performance.now();
    try {
      await this.process(runId, internal, taken);
      this.refusals.delete(runId);
    } finally {
      const seconds = (performance.now() - started) / 1000;
      countLater(() => metrics.activationSeconds.observe({ kind }, seconds, runId));
    }
  }

  private async process(runId: string, internal = true, taken: Taken = {}): Promise<void> {
    const { scheduleToStartMs } = taken;
    if (this.crashed) return;
    if (this.ended.has(runId) && !this.hot.has(runId)) return;
    let run = this.hot.get(runId);
    const kind = run === undefined ? "cold" : "hot";
    countLater(() => metrics.activations.inc({ kind }));
    const takenAt = Date.now();
    if (run !== undefined && !internal)
      run.activation ??= {
        kind: "hot",
        replayed: 0,
        attempt: run.lease.attempts,
        startedAt: takenAt,
        ...(scheduleToStartMs !== undefined ? { scheduleToStartMs } : {}),
      };
    if (run === undefined) {
      const started = performance.now();
      // The load reads the inbox as it is now; a ring from here on marks it to be read again.
      this.inboxDirty.delete(runId);
      run = await this.load(runId, takenAt, taken);
      if (run !== undefined)
        metrics.replaySeconds.observe({}, (performance.now() - started) / 1000, runId);
    }
    if (run === undefined || run.dropped) return;
    run.lastActive = this.now();
    run.wakePending = false;
    // What one run may take per turn: a run with thousands of events ready (timers due at once,
    // calls answered together) takes a bounded share, then waits for its next turn behind what
    // else is ready (issue 17's fairness), instead of holding the loop for all of them.
    let budget = EVENTS_PER_TURN;
    // Outcomes of calls, in the order they arrived.
    while (run.outcomes.length > 0 && budget-- > 0) {
      const event = { ...run.outcomes[0]!, at: this.now() };
      // After a verdict or a cancel, outcomes of calls still in flight are recorded, not delivered.
      const produce =
        run.engine.outcome === undefined
          ? () => run.engine.deliver(event)
          : async () =>
              run.engine.recordOutcome(event as Parameters<RunEngine["recordOutcome"]>[0]);
      if (!(await this.step(run, produce))) return;
      run.outcomes.shift(); // journaled: only now is it done with (a rebuilt run delivers it again)
      if ("callSeq" in event) this.owed(runId)?.delete(event.callSeq);
    }
    // Signals and cancels from the inbox: only the owner turns them into journal entries.
    const inbox = run.loadedInbox ?? [];
    run.loadedInbox = undefined;
    if (this.inboxDirty.delete(runId)) {
      const seen = new Set(inbox.map((item) => item.id));
      for (const item of await this.options.store.pendingInbox(runId))
        if (!seen.has(item.id)) inbox.push(item);
    }
    for (const item of inbox) {
      if (run.engine.outcome !== undefined) break;
      const produce =
        item.kind === "signal"
          ? () =>
              run.engine.deliver({
                kind: "signal",
                name: item.name ?? "",
                payload: item.payload,
                at: this.now(),
              })
          : async () => run.engine.cancel("cancelled through the API");
      if (!(await this.step(run, produce, { inboxId: item.id }))) return;
    }
    // Timers that are due, delivered together and journaled in one commit (their effects wait
    // for it, as every effect does): thousands due at once cost a commit per turn, not each.
    const now = this.now();
    const due: { seq: number; due: number }[] = [];
    for (const timer of run.engine.pendingTimers())
      if (timer.due <= now && due.push(timer) > budget) break;
    const fired = due.slice(0, Math.max(0, budget));
    if (due.length > fired.length) budget = -1; // more are due than this turn takes
    if (fired.length > 0 && run.engine.outcome === undefined) {
      const fire = async () => {
        const entries: JournalEntry[] = [];
        for (const timer of fired) {
          if (run.engine.outcome !== undefined) break; // ended: later timers no longer fire
          countLater(() => metrics.timerLateness.observe({}, (now - timer.due) / 1000, runId));
          entries.push(
            ...(await run.engine.deliver({ kind: "timer.fired", timerSeq: timer.seq, at: now })),
          );
        }
        return entries;
      };
      if (!(await this.step(run, fire))) return;
    }
    if (budget < 0) this.nextTurn(run); // more was ready than this turn could take
    if (run.attemptOpen && !run.rerunCalls && !run.dropped) {
      // Loaded and fine, with nothing to do yet (it waits): this load was no attempt. Not so
      // when it re-ran a call: its outcome is what may take the process down (issue 17).
      run.attemptOpen = false;
      await this.options.store.clearAttempts(run.lease);
    }
    await this.settle(run);
  }

  /**
   * Activates the run again once what is ready now (I/O, other runs' activations) had its turn.
   * Wake-ups collapse: a run with many timers due at once gets one activation, not one each.
   */
  private nextTurn(run: HotRun, later = true): void {
    if (run.wakePending) return;
    run.wakePending = true;
    if (later) setImmediate(() => void this.activate(run.runId, true));
    else void this.activate(run.runId, true);
  }

  /**
   * A cold run: take its lease, read its journal, replay it, and carry on live. A new run's first
   * ring says which script it runs: its sandbox context is made while the lease and the journal
   * are read (one round trip either way), and used if the journal holds that run's start alone.
   */
  private async load(
    runId: string,
    takenAt = Date.now(),
    { scheduleToStartMs, first }: Taken = {},
  ): Promise<HotRun | undefined> {
    const early = first === undefined ? undefined : this.earlyContext(runId, first);
    try {
      if (early !== undefined && first?.started !== undefined) {
        const run = await this.startAtOnce(first.started, early, takenAt, scheduleToStartMs, first);
        if (run instanceof HotRun) return run;
        if (run instanceof SandboxLost) return await this.chargeFirstDeath(runId, run);
        // Not as the ring said (a signal came first, another worker took it, its top level
        // failed): read and replayed as any cold run, which meets each of those as usual.
        return await this.loadWith(runId, takenAt, scheduleToStartMs, undefined);
      }
      return await this.loadWith(runId, takenAt, scheduleToStartMs, early);
    } finally {
      // Not taken by the replay (another journal, a refusal, a failure): let it go.
      if (early !== undefined && !early.taken)
        early.instance.then(
          (instance) => instance.dispose(),
          () => {},
        );
    }
  }

  /** The sandbox context of a run about to be read, from its first ring's hint. */
  private earlyContext(runId: string, first: FirstActivation): EarlyContext | undefined {
    if (this.heavy.has(runId) || !this.epochs.includes(first.epoch)) return undefined;
    const instance = this.script(first.namespace, first.scriptHash).then((script) =>
      this.options.sandbox.instantiate(script, {
        seed: first.seed,
        startAt: first.at,
        epoch: first.epoch,
        runId,
        fastReplay: true,
        liveSlices: true,
      }),
    );
    // Its failure is the replay's to handle (a death charged as on the usual path), and only if
    // the replay takes it: a context of a hint the journal does not bear out is never looked at.
    instance.catch(() => {});
    return { first, instance, taken: false };
  }

  /**
   * A new run whose first ring carries its whole start: its top level runs at once, from the
   * ring, and its first commit takes the lease (RunAppend.claim), with no round trip before it.
   * Nothing it produced takes effect before that commit, so a refused claim or any failure on
   * the way costs only the work: undefined, and the caller takes the usual path, which reads
   * the run as it is and meets what stopped this one (a slice that ran out marks it heavy, a
   * signal is delivered). A script that took its sandbox process down: that death, to charge.
   */
  private async startAtOnce(
    started: RunStartedEntry,
    early: EarlyContext,
    takenAt: number,
    scheduleToStartMs: number | undefined,
    { traceparent }: FirstActivation,
  ): Promise<HotRun | SandboxLost | undefined> {
    const { runId } = started;
    adoptRunTrace(runId, traceparent);
    early.taken = true;
    let replayed: Awaited<ReturnType<Executor["replay"]>>;
    try {
      const script = await this.script(started.namespace, started.scriptHash);
      replayed = await this.replay(script, started, started.epoch, [started], true, early.instance);
    } catch (error) {
      return error instanceof SandboxLost && error.executing ? error : undefined;
    }
    const { instance, resumed } = replayed;
    const lease: Lease = {
      runId,
      owner: this.options.owner,
      token: FIRST_CLAIM_TOKEN,
      lastSeq: 1,
      attempts: 1,
      namespace: started.namespace,
    };
    const run = new HotRun(runId, started.toolset, resumed.engine, instance, lease, 1);
    run.claim = { started, ttlMs: this.leaseTtlMs };
    run.activation = {
      kind: "cold",
      replayed: 1,
      attempt: lease.attempts,
      startedAt: takenAt,
      ...(scheduleToStartMs !== undefined ? { scheduleToStartMs } : {}),
    };
    run.storedStatus = "queued";
    run.loadedInbox = []; // the claim holds only while its inbox is empty
    await this.bindLimits(run, started.namespace, [started]);
    this.hot.set(runId, run);
    metrics.hotRuns.set(this.hot.size);
    this.evictIfFull();
    try {
      // Refused (the run is as it was), or ended by the step itself (failed over a limit): the
      // usual path reads it as it is now.
      if (!(await this.step(run, async () => resumed.entries))) return undefined;
      for (const timer of run.engine.pendingTimers()) this.wakeAt(run, timer.seq, timer.due);
    } catch (error) {
      this.drop(run);
      throw error;
    }
    return run;
  }

  /**
   * A new run's script took its sandbox process down before its first commit: the death is
   * charged to it as on the usual path (which needs its lease), then it is loaded again there.
   */
  private async chargeFirstDeath(runId: string, lost: SandboxLost): Promise<HotRun | undefined> {
    const { store, owner } = this.options;
    const lease = await store.acquireLease(runId, owner, this.leaseTtlMs, { epochs: this.epochs });
    if (lease === undefined) return undefined; // ended, or another worker's now
    return this.loadAgain(lease, 1, lost);
  }

  private async loadWith(
    runId: string,
    takenAt: number,
    scheduleToStartMs: number | undefined,
    early: EarlyContext | undefined,
  ): Promise<HotRun | undefined> {
    const { store } = this.options;
    // One round trip: the lease, and with it the run, its journal and its inbox.
    const loaded = await store.loadRun(runId, this.options.owner, this.leaseTtlMs, {
      steal: this.options.stealLeases === true,
      epochs: this.epochs,
    });
    if (loaded === undefined) return undefined; // ended, another owner holds it, or another epoch
    hop("worker.leased", runId);
    const { lease, record, journal, inbox } = loaded;
    adoptRunTrace(runId, record.traceparent); // its logs and exemplars name its start's trace
    const bound = this.options.maxAttempts ?? 5;
    // Deaths of its sandbox process while it executed, charged by the supervisor before this
    // load: past the bound with no progress beyond the seq of the last one, it is failed first.
    const deaths = lease.deaths;
    if (deaths !== undefined && deaths.count >= bound && lease.lastSeq <= deaths.seq)
      return this.failCrashLoop(lease, deaths.count, deaths.cause ?? undefined);
    // Refused by the store again and again: named for that, whether supervised or not.
    const refused = this.refusals.get(runId);
    if (refused !== undefined && refused.times >= bound) {
      this.refusals.delete(runId);
      return this.failLoaded(lease, storeRefused(refused.times, lease.lastSeq, refused.cause));
    }
    // Without supervision a script may have taken this process down: each load that made no
    // progress counts. With it, a script cannot, and a kill -9 of this process (a deploy, an
    // operator) must not charge the runs it held: their deaths are counted above, precisely.
    if (this.options.sandbox.supervised !== true && lease.attempts > bound)
      return this.failCrashLoop(lease, lease.attempts - 1);
    if (ENDED_STATUSES.has(record.status) || record.status === "quarantined") {
      await store.releaseLease(lease);
      return undefined;
    }
    const started = journal[0];
    if (started?.kind !== "run.started")
      throw new RewindError("SANDBOX_ERROR", `Run ${runId} has no run.started entry`);
    const script = await this.script(record.namespace, record.scriptHash);
    // A capture policy redacted an entry the script saw in the clear: a replay would hand it a
    // marker instead, and go on with other data. Held for an operator, never replayed.
    const redacted = firstRedacted(journal);
    if (redacted !== undefined)
      return this.quarantine(
        lease,
        record.epoch,
        script,
        journal,
        notReplayable(runId, redacted.seq, redacted.rules),
        "not-replayable",
        { seq: redacted.seq, rules: redacted.rules },
      );
    let replayed: {
      instance: ScriptHandle;
      resumed: Awaited<ReturnType<typeof RunEngine.resume>>;
    };
    // A fork's first load: the new script against its parent's journal, reusing what matches.
    if (journal.length === 1 && started.parent !== undefined) {
      let fork: HotRun | undefined;
      try {
        fork = await this.startFork(lease, record, started, script);
      } catch (error) {
        // Its script took its sandbox process down: a death charged to it like any run's.
        if (error instanceof SandboxLost) return this.loadAgain(lease, journal.length, error);
        throw error;
      }
      if (fork !== undefined) fork.loadedInbox = inbox;
      return fork;
    }
    try {
      // The context made from the first ring's hint, if the journal is that run's start alone.
      const ready =
        early !== undefined &&
        journal.length === 1 &&
        record.epoch === early.first.epoch &&
        !this.heavy.has(runId) &&
        startedAsHinted(started, early.first)
          ? early
          : undefined;
      if (ready !== undefined) ready.taken = true;
      replayed = await this.replay(
        script,
        started,
        record.epoch,
        journal,
        !this.heavy.has(runId),
        ready?.instance,
      ).catch((error: unknown) => {
        // A slice ran out (a heavy script): replay again, fully async.
        if (error instanceof LiveSliceExceeded) this.heavy.add(runId);
        if (error instanceof ReplaySliceExceeded)
          return this.replay(script, started, record.epoch, journal, false);
        throw error;
      });
    } catch (error) {
      if (error instanceof SandboxLost) return this.loadAgain(lease, journal.length, error);
      // A replay that leaves its journal, or a journal that cannot be replayed: the platform's
      // fault, never the run's. It is held for an operator, before anything of it happens again.
      const reason = quarantineReason(error);
      if (reason !== undefined) {
        if (reason === "divergence") metrics.divergences.inc();
        return this.quarantine(lease, record.epoch, script, journal, error as RewindError, reason);
      }
      throw error;
    }
    const { instance, resumed } = replayed;
    const run = new HotRun(runId, record.toolset, resumed.engine, instance, lease, journal.length);
    run.activation = {
      kind: "cold",
      replayed: journal.length,
      attempt: lease.attempts,
      startedAt: takenAt,
      ...(scheduleToStartMs !== undefined ? { scheduleToStartMs } : {}),
    };
    run.storedStatus = record.status;
    await this.bindLimits(run, started.namespace, journal);
    run.loadedInbox = inbox;
    this.hot.set(runId, run);
    metrics.hotRuns.set(this.hot.size);
    this.evictIfFull();
    // Until its calls in flight run again and its timers are armed, this copy is not one to keep:
    // a failure on the way (the store down) drops it, and the retry loads the run afresh.
    try {
      if (!(await this.step(run, async () => resumed.entries))) return undefined;
      // Calls journaled without an outcome may have run before the stop: run them again, same callId.
      for (const call of run.engine.inFlightCalls()) {
        if (call.seq > journal.length) continue; // new: `step` invoked it
        if (this.owed(runId)?.has(call.seq)) continue; // its outcome comes here (a rebuild)
        const tool = this.options.toolsets.get(run.toolset)?.tools.get(call.name);
        if (tool?.unsafeToRepeat) {
          await this.step(run, async () => run.engine.fail(unsafeToRepeat(call, run.toolset)));
          break;
        }
        this.invoke(run, call);
        // A call run again is no progress: if the script dies on its outcome, as it did last time,
        // this load must still count (see `process`).
        run.rerunCalls = true;
      }
      for (const timer of run.engine.pendingTimers()) this.wakeAt(run, timer.seq, timer.due);
    } catch (error) {
      this.drop(run);
      throw error;
    }
    return run;
  }

  /**
   * Builds a fork's journal: its script replayed against the parent's history. The reused entries
   * are journaled with no effect (they happened in the parent); a reused call still in flight
   * there runs again with its callId, unless unsafe to repeat; then the fork goes on live.
   */
  private async startFork(
    lease: Lease,
    record: { status: RunStatus; toolset: string; epoch: number },
    started: RunStartedEntry,
    script: CompiledScript,
  ): Promise<HotRun | undefined> {
    const parent = await this.options.store.readJournal(started.parent!.runId);
    const instance = await this.options.sandbox.instantiate(script, {
      seed: started.seed,
      startAt: started.at,
      epoch: record.epoch,
      runId: started.runId,
    });
    let forked: Awaited<ReturnType<typeof RunEngine.fork>>;
    try {
      forked = await RunEngine.fork(instance, started, parent, {
        maxValueBytes: this.maxValueBytes,
        ...(started.parent!.seq > 1 ? { at: started.parent!.seq } : {}),
      });
    } catch (error) {
      instance.dispose();
      throw error;
    }
    const boundary = forked.reused + 1;
    const run = new HotRun(started.runId, record.toolset, forked.engine, instance, lease, 1);
    run.storedStatus = record.status;
    await this.bindLimits(run, started.namespace, [started]);
    this.hot.set(started.runId, run);
    metrics.hotRuns.set(this.hot.size);
    const reused = forked.entries.filter((e) => e.seq <= boundary);
    const live = forked.entries.filter((e) => e.seq > boundary);
    // The reused part is journaled first, without effects. When the script ended right where the
    // reuse ends, its verdict is in the live part: keep the lease and the run row's status for it.
    const more = live.length > 0;
    // As in `load`: a copy that failed on its way to going live is dropped, not kept half-started.
    try {
      if (!(await this.step(run, async () => reused, { effects: false, more }))) return undefined;
      for (const call of run.engine.inFlightCalls()) {
        if (call.seq > boundary) continue;
        if (this.options.toolsets.get(run.toolset)?.tools.get(call.name)?.unsafeToRepeat) {
          await this.step(run, async () => run.engine.fail(unsafeToRepeat(call, run.toolset)));
          return run;
        }
        this.invoke(run, call);
      }
      if (!(await this.step(run, async () => live))) return undefined;
      for (const timer of run.engine.pendingTimers()) this.wakeAt(run, timer.seq, timer.due);
    } catch (error) {
      this.drop(run);
      throw error;
    }
    return run;
  }

  /**
   * A new instance of the script, replayed to the end of the journal (fast: in sync slices), in
   * the run's epoch: its row's, which a move between epochs or a release onto another changes
   * (run.started keeps the epoch it started in).
   */
  private async replay(
    script: CompiledScript,
    started: RunStartedEntry,
    epoch: number,
    journal: readonly JournalEntry[],
    slices: boolean,
    ready?: Promise<ScriptHandle>,
  ) {
    const instance = await (ready ??
      this.options.sandbox.instantiate(script, {
        seed: started.seed,
        startAt: started.at,
        epoch,
        runId: started.runId,
        fastReplay: slices,
        liveSlices: slices,
      }));
    hop("worker.context", started.runId);
    try {
      const resumed = await RunEngine.resume(instance, journal, {
        maxValueBytes: this.maxValueBytes,
      });
      hop("worker.toplevel", started.runId);
      return { instance, resumed };
    } catch (error) {
      instance.dispose();
      throw error;
    }
  }

  /**
   * Appends what `produce` adds to the engine, fenced by the lease, then acts on it. Returns false
   * when the run can go no further here (lease lost, commit failed): its hot copy is then dropped.
   * `inboxId`: the inbox item these entries consume. `effects: false`: journal only (a fork's
   * reused part). `more`: entries the engine already holds follow in the next step, so this one
   * neither ends the run's row nor lets go of its lease.
   */
  private async step(
    run: HotRun,
    produce: () => Promise<JournalEntry[]>,
    { inboxId, effects = true, more = false }: StepOptions = {},
  ): Promise<boolean> {
    // The capture policy's seam: what is committed has its secrets replaced by markers (and is
    // marked redacted); the live script and the tools it calls keep the real values. Read before
    // the engine takes the event: a store that cannot answer then fails the activation while this
    // copy is still in step with its journal, and the retry finds it as it was.
    const redactor = await this.capture.of(run.namespace, run.toolset);
    let entries: JournalEntry[];
    try {
      entries = await produce();
      hop("worker.produced", run.runId);
    } catch (error) {
      if (error instanceof LiveSliceExceeded) return this.rebuild(run);
      if (error instanceof SandboxLost) return this.failover(run, error);
      throw error;
    }
    if (entries.length === 0 && run.status === run.storedStatus) return true;
    // The namespace's limits hold here, where the journal is appended, not in the guest.
    // Counted once: the usage the run has if this commit goes in.
    const usage = run.usage.with(entries);
    const over = usage.exceeded(run.limits, run.namespace);
    if (over !== undefined) return this.failOverLimit(run, over.name, over.error);
    this.fault("produced", run);
    // From here the engine is ahead of the journal: it took the event and emitted commands that
    // are not committed. Whatever fails before the commit answers (the commit, or a commit whose
    // answer was lost) leaves this copy out of step with the journal, so it is dropped, never
    // retried: a retry would deliver the event again to an engine that already took it ("No call
    // at seq N awaits an outcome", over and over), or find nothing left to do while the commands
    // it emitted were never journaled.
    let stored: JournalEntry[];
    let append: RunAppend;
    let outcome;
    try {
      stored = redactor === undefined ? entries : redactor.entries(entries);
      const status = more ? (run.storedStatus ?? run.status) : run.status;
      append = {
        lease: run.lease,
        afterSeq: run.committedSeq,
        entries: stored,
        status,
        runRowUnchanged: status === run.storedStatus,
        // Ended with nothing in flight: nothing more will be appended, so let go in this commit.
        releaseLease: !more && run.finished,
      };
      if (inboxId !== undefined) append.inboxConsumed = [{ id: inboxId, seq: entries[0]!.seq }];
      if (run.claim !== undefined) append.claim = run.claim;
      // The activation's first commit records it (only one with entries: its row names the first).
      if (run.activation !== undefined && entries.length > 0) append.activation = run.activation;
      outcome = await this.committer.append(append);
    } catch (error) {
      this.drop(run);
      throw error;
    }
    countLater(() => {
      metrics.commits.inc({ outcome });
      if (outcome === "ok") for (const entry of entries) metrics.entries.inc({ kind: entry.kind });
    });
    if (outcome === "lease_lost") {
      // A claim refused is no lease lost: it was never this process's.
      if (append.claim === undefined) countLater(() => metrics.leaseLosses.inc());
      this.drop(run);
      return false;
    }
    run.claim = undefined;
    if (append.activation !== undefined) run.activation = undefined;
    if (append.releaseLease === true) run.leaseReleased = true;
    run.usage = usage;
    run.committedSeq = entries.at(-1)?.seq ?? run.committedSeq;
    run.attemptOpen = false; // a commit is progress: the next lease starts the count again
    run.storedStatus = append.status;
    hop(run.finished ? "worker.ended" : "worker.commit", run.runId, undefined, run.committedSeq);
    this.options.onCommitted?.(run.runId, append.status);
    this.fault("committed", run);
    if (effects) await this.act(run, entries, stored);
    this.fault("acted", run);
    return true;
  }

  /**
   * Effects of committed entries: only now do calls run, timers arm and output show. Calls get
   * the real arguments; output is published as it was committed (`stored`: redacted).
   */
  private async act(
    run: HotRun,
    entries: readonly JournalEntry[],
    stored: readonly JournalEntry[],
  ): Promise<void> {
    let verdict: ErrorData | undefined;
    for (const [index, entry] of entries.entries()) {
      switch (entry.kind) {
        case "call": {
          const toolset = this.options.toolsets.get(run.toolset);
          if (toolset === undefined || !toolset.tools.has(entry.name)) {
            verdict ??= toolNotFound(entry.name, run.toolset, toolset);
            break;
          }
          if (verdict === undefined) this.invoke(run, entry);
          break;
        }
        case "timer.set":
          this.wakeAt(run, entry.seq, entry.due);
          break;
        case "timer.cancel":
        case "timer.fired": {
          clearTimeout(run.timerHandles.get(entry.timerSeq));
          run.timerHandles.delete(entry.timerSeq);
          break;
        }
        case "output":
          this.options.onOutput?.(run.runId, stored[index] as typeof entry);
          break;
        default:
          break;
      }
    }
    if (verdict !== undefined) await this.step(run, async () => run.engine.fail(verdict));
  }

  /**
   * A live activation outran its sync slice and was stopped mid-way: nothing of it was journaled
   * or acted on. The run is rebuilt from its journal, async from now on (it computes a lot), and
   * its pending events (the interrupted one first) go to the new copy; calls in flight here keep
   * running and report to it. Returns false: this copy goes no further.
   */
  private async rebuild(run: HotRun): Promise<false> {
    this.heavy.add(run.runId);
    this.hot.delete(run.runId);
    run.dispose(); // not drop(): the calls it owes stay owed, by its successor
    return this.handOver(run, () => this.load(run.runId));
  }

  /**
   * The sandbox process running this run's script died: the hot copy is gone. The death is
   * charged to this run if its script was the one executing (before it is loaded again, so the
   * load sees the count); the run is then loaded in a fresh process, its pending events go to the
   * new copy, and calls in flight here keep running and report to it. Returns false.
   */
  private async failover(run: HotRun, lost: SandboxLost): Promise<false> {
    this.hot.delete(run.runId);
    run.dispose(); // not drop(): the calls it owes stay owed, by its successor
    metrics.hotRuns.set(this.hot.size);
    return this.handOver(run, () => this.loadAgain(run.lease, run.committedSeq, lost));
  }

  /**
   * A disposed hot copy's successor, loaded here, takes its pending outcomes and inbox, and is
   * activated. With no successor (the load failed: the store is down; or the run is no longer
   * this process's), the outcomes the copy held go with it: their calls are no longer owed here,
   * so whoever loads the run next runs them again (same callId) instead of waiting for them.
   */
  private async handOver(run: HotRun, load: () => Promise<HotRun | undefined>): Promise<false> {
    let next: HotRun | undefined;
    try {
      next = await load();
    } finally {
      if (next === undefined) this.owedCalls.delete(run.runId);
    }
    if (next !== undefined) {
      next.outcomes.unshift(...run.outcomes);
      this.inboxDirty.add(run.runId);
      void this.activate(run.runId, true);
    }
    return false;
  }

  /** After a lost sandbox process: the death charged if this run was executing, then a new load. */
  private async loadAgain(
    lease: Lease,
    seq: number,
    lost: SandboxLost,
  ): Promise<HotRun | undefined> {
    if (lost.executing) {
      await this.options.store.recordDeath(lease, seq, lost.why);
      this.options.onDeath?.(lease.runId, lost.why);
    }
    // Handed back and taken again: taking it while still ours would count the load as an
    // attempt, and a run that merely shared the dead process must not be charged anything.
    await this.options.store.releaseLease(lease);
    return this.load(lease.runId);
  }

  private invoke(run: HotRun, call: CallEntry): void {
    const tool = this.options.toolsets.get(run.toolset)?.tools.get(call.name);
    if (tool === undefined) return;
    hop("worker.invoke", run.runId);
    const owed = this.owed(run.runId) ?? new Set<number>();
    this.owedCalls.set(run.runId, owed.add(call.seq));
    const started = performance.now();
    void invokeTool(tool, call, {
      runId: run.runId,
      toolset: run.toolset,
      maxValueBytes: this.maxValueBytes,
      backoff: (ms) => sleep(ms),
    }).then((outcome) => {
      const result = outcome.ok ? "ok" : "error";
      const seconds = (performance.now() - started) / 1000;
      countLater(() => {
        const labels = { toolset: run.toolset, tool: call.name, outcome: result };
        metrics.toolCalls.inc(labels);
        metrics.toolSeconds.observe(labels, seconds, run.runId);
      });
      // The outcome goes to the copy of the run held here now (this one, or what rebuilt it),
      // while the call is still owed: a dropped copy takes what it owed with it (`drop` forgets
      // the set), and a copy loaded after that ran the call again itself.
      const current = this.hot.get(run.runId);
      if (current === undefined || current.dropped || this.owedCalls.get(run.runId) !== owed) {
        owed.delete(call.seq);
        return; // the run left this process: whoever loads it next runs the call again
      }
      hop("worker.outcome", run.runId);
      current.outcomes.push(outcomeEvent(call, outcome, this.now()));
      this.nextTurn(current, false);
    });
  }

  /** Ends or parks a run after its events: ended runs leave memory; outcomes of late calls are kept. */
  private async settle(run: HotRun): Promise<void> {
    const outcome = run.engine.outcome;
    if (outcome === undefined || !run.finished) return; // calls in flight record their outcomes first
    this.hot.delete(run.runId);
    run.dispose();
    this.remember(run.runId);
    metrics.runsEnded.inc({ status: outcome });
    metrics.hotRuns.set(this.hot.size);
    if (!run.leaseReleased) await this.options.store.releaseLease(run.lease).catch(() => {});
    this.options.onEnded?.(run.runId, outcome);
  }

  private wakeAt(run: HotRun, timerSeq: number, due: number): void {
    clearTimeout(run.timerHandles.get(timerSeq));
    // In steps Node can arm (a far timer would otherwise fire at once, again and again), and
    // only once the clock has reached `due`: the activation must find the timer due.
    armUntil(
      due,
      this.now,
      () => this.nextTurn(run, false),
      (handle) => run.timerHandles.set(timerSeq, handle),
    );
  }

  /**
   * Journals run.quarantined with the full report and hands the run back. From then on its timers
   * do not fire and its signals wait in its inbox (the store skips quarantined runs) until the
   * quarantine service releases it or gives up on it.
   */
  private async quarantine(
    lease: Lease,
    runEpoch: number,
    script: CompiledScript,
    journal: readonly JournalEntry[],
    error: RewindError,
    reason: QuarantineReason,
    details?: Record<string, Json>,
  ): Promise<undefined> {
    const entry = await quarantineEntry({
      error,
      reason,
      ...(details === undefined ? {} : { details }),
      journal,
      runEpoch,
      worker: {
        owner: this.options.owner,
        build: this.options.build ?? buildVersion(),
        epochs: this.epochs,
      },
      sandbox: this.options.sandbox,
      script,
      at: this.now(),
    });
    const outcome = await this.committer.append({
      lease,
      afterSeq: journal.length,
      entries: [entry],
      status: "quarantined",
    });
    if (outcome === "ok") {
      metrics.quarantined.inc({ reason });
      metrics.entries.inc({ kind: entry.kind });
      this.options.onCommitted?.(lease.runId, "quarantined");
      this.options.onQuarantined?.(lease.runId, entry.seq, reason);
    }
    await this.options.store.releaseLease(lease).catch(() => {});
    return undefined;
  }

  /** A run that took its process down again and again without progress is failed, not retried. */
  private failCrashLoop(lease: Lease, times: number, cause?: string): Promise<undefined> {
    return this.failLoaded(lease, crashLoop(times, lease.lastSeq, cause));
  }

  /** Fails a run just leased, before anything of it runs again. */
  private async failLoaded(lease: Lease, error: ErrorData): Promise<undefined> {
    const verdict = {
      seq: lease.lastSeq + 1,
      kind: "run.failed",
      at: this.now(),
      error,
    } as JournalEntry;
    const outcome = await this.committer.append({
      lease,
      afterSeq: lease.lastSeq,
      entries: [verdict],
      status: "failed",
    });
    if (outcome === "ok") metrics.entries.inc({ kind: verdict.kind });
    await this.options.store.releaseLease(lease).catch(() => {});
    this.remember(lease.runId);
    metrics.runsEnded.inc({ status: "failed" });
    this.options.onEnded?.(lease.runId, "failed");
    return undefined;
  }

  /** A namespace's limits changed (set through an API in this process): read them at next load. */
  forgetLimits(namespace: string): void {
    this.limits.forget(namespace);
  }

  private async bindLimits(
    run: HotRun,
    namespace: string,
    journal: readonly JournalEntry[],
  ): Promise<void> {
    run.namespace = namespace;
    run.usage = RunUsage.of(journal);
    try {
      run.limits = await this.limits.of(namespace);
    } catch (error) {
      // The store is down as the cache runs out: the load fails and is retried, and the copy it
      // replayed, not yet hot, must not keep its sandbox context for the life of the process.
      run.dispose();
      throw error;
    }
  }

  /**
   * A run past a limit of its namespace (entries, bytes, output, timers) is failed with the
   * limit's error, instead of journaling what went past it: its hot copy is dropped, and what it
   * had emitted in that step never takes effect.
   */
  private async failOverLimit(run: HotRun, limit: LimitName, error: RewindError): Promise<false> {
    countLater(() => metrics.limitsExceeded.inc({ limit }));
    this.drop(run);
    const verdict = {
      seq: run.committedSeq + 1,
      kind: "run.failed",
      at: this.now(),
      error: error.toData(),
    } as JournalEntry;
    const outcome = await this.committer.append({
      lease: run.lease,
      afterSeq: run.committedSeq,
      entries: [verdict],
      status: "failed",
      releaseLease: true,
      ...(run.claim === undefined ? {} : { claim: run.claim }),
    });
    if (outcome !== "ok") return false; // another owner has it now: it meets the limit there
    metrics.entries.inc({ kind: verdict.kind });
    this.remember(run.runId);
    metrics.runsEnded.inc({ status: "failed" });
    metrics.hotRuns.set(this.hot.size);
    this.options.onCommitted?.(run.runId, "failed");
    this.options.onEnded?.(run.runId, "failed");
    return false;
  }

  private remember(runId: string): void {
    this.ended.add(runId);
    if (this.ended.size > 10_000) this.ended.delete(this.ended.values().next().value!);
  }

  private fault(point: FaultPoint, run: HotRun): void {
    if (this.options.crashAt?.(point, run.runId) !== true) return;
    // Die as a process would: stop everything, release nothing, keep no hot state.
    this.closed = this.crashed = true;
    clearInterval(this.renewal);
    for (const hot of this.hot.values()) hot.dispose();
    this.hot.clear();
    throw new Crashed(`crashed at ${point}`);
  }

  private owed(runId: string): Set<number> | undefined {
    const owed = this.owedCalls.get(runId);
    if (owed !== undefined && owed.size === 0) this.owedCalls.delete(runId);
    return owed?.size === 0 ? undefined : owed;
  }

  private drop(run: HotRun): void {
    this.owedCalls.delete(run.runId); // whoever loads it next runs its calls in flight again
    if (this.hot.get(run.runId) === run) this.hot.delete(run.runId);
    run.dispose();
  }

  /** Keeps the hot cache within its bounds: evicted runs hand their leases back. */
  private evictIfFull(): void {
    for (const run of this.hot.overflow()) {
      this.drop(run);
      void this.options.store.releaseLease(run.lease).catch(() => {});
    }
    metrics.hotRuns.set(this.hot.size);
  }

  private async renewLeases(): Promise<void> {
    if (this.hot.size === 0) return;
    await this.options.store
      .renewLeases(this.options.owner, [...this.hot.keys()], this.leaseTtlMs)
      .catch(() => {});
  }

  /** The run's script: its namespace's copy (each namespace stores its own, with its map). */
  private script(namespace: string, hash: string): Promise<CompiledScript> {
    const key = `${namespace}\u0000${hash}`;
    let script = this.scripts.get(key);
    if (script === undefined) {
      script = this.options.store.getScript(namespace, hash).then((stored) => {
        if (stored === undefined)
          throw new RewindError("NOT_FOUND", `Script ${hash} is not in the store`);
        return stored;
      });
      script.catch(() => this.scripts.delete(key));
      this.scripts.set(key, script);
    }
    return script;
  }

  /** A failed activation (the store unreachable, …): retried with a pause; nothing is lost. */
  private failed(runId: string, error: unknown): void {
    if (error instanceof Crashed) return;
    const cause = storeRefusal(error);
    if (cause !== undefined)
      this.refusals.set(runId, { times: (this.refusals.get(runId)?.times ?? 0) + 1, cause });
    this.options.onError?.(runId, error);
    if (this.closed) return;
    const retry = setTimeout(() => void this.activate(runId), 1000);
    retry.unref();
  }
}
