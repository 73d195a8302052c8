import { createHash } from "node:crypto";
import {
  RewindError,
  canonicalize,
  inCanonicalOrder,
  newSeed,
  type CallEntry,
  type ErrorData,
  type Json,
  type JournalEntry,
  type OutputEntry,
  type RunStartedEntry,
  EMPTY_TOOLSET,
  type Toolset,
} from "@rewind/core";
import { DivergenceError, RunEngine, type DivergenceReport } from "@rewind/journal";
import { newRunEpoch, type CompiledScript, type ScriptSandbox } from "@rewind/sandbox";
import { invokeTool, outcomeEvent, type CallOutcome } from "./invoke.js";
import { toolNotFound, unsafeToRepeat } from "./verdicts.js";
import { VirtualSchedule } from "./virtual-clock.js";

/** A signal to deliver in mock mode, `afterMs` after the run's start on the virtual clock. */
export interface ScheduledSignal {
  afterMs: number;
  name: string;
  payload?: Json;
}

export interface InProcessOptions {
  script: CompiledScript;
  sandbox: ScriptSandbox;
  input?: Json;
  seed?: string;
  /** Virtual start time (ms since the epoch); default 2025-01-01T00:00:00Z so journals repeat. */
  startAt?: number;
  runId?: string;
  toolset?: Toolset;
  /** A recorded journal (possibly a prefix): replayed first, then the run continues live. */
  resume?: readonly JournalEntry[];
  /**
   * Fork this parent: a new run (the parent's seed, input and start) whose script reuses the
   * parent's recorded calls while it makes the same ones, then goes on live (from `at` at most).
   */
  fork?: { parent: readonly JournalEntry[]; at?: number };
  signals?: readonly ScheduledSignal[];
  /** Virtual time a call takes before its outcome arrives (default 0). */
  latency?: (call: CallEntry) => number;
  /** Called with each batch of new entries as it is committed: the write-ahead point. */
  onCommit?: (entries: readonly JournalEntry[]) => void;
  /** Called with output entries once committed (never for replayed ones). */
  onOutput?: (entry: OutputEntry) => void;
  epoch?: number;
}

export type InProcessStatus = "completed" | "failed" | "cancelled" | "waiting" | "diverged";

export interface InProcessResult {
  status: InProcessStatus;
  journal: JournalEntry[];
  result?: Json;
  error?: ErrorData;
  divergence?: DivergenceReport;
  /** For a fork: how many entries after run.started were reused from the parent. */
  reused?: number;
}

export const DEFAULT_START = Date.UTC(2025, 0, 1);

/**
 * Runs a script in-process in mock mode: tools are called in this process, time is virtual (the
 * clock jumps to the next due event whenever the run is idle, so a ten-day sleep takes
 * milliseconds), and the journal is kept in memory and handed to `onCommit` batch by batch.
 */
export async function runInProcess(options: InProcessOptions): Promise<InProcessResult> {
  const toolset = options.toolset ?? EMPTY_TOOLSET;
  const started = options.resume?.[0] ?? startedEntry(options, toolset);
  if (started.kind !== "run.started") {
    throw new RewindError(
      "INVALID_INPUT",
      "A journal to resume must begin with its run.started entry",
    );
  }
  const attempt = async (replayCallsites: boolean) => {
    const instance = await options.sandbox.instantiate(options.script, {
      seed: started.seed,
      startAt: started.at,
      epoch: started.epoch,
    });
    try {
      return await new MockRun(options, toolset, started).run(instance, replayCallsites);
    } finally {
      instance.dispose();
    }
  };
  const result = await attempt(false);
  // Replay skips callsites of recorded batches; a divergence report needs the script's side.
  if (
    result.status === "diverged" &&
    result.divergence?.replayed &&
    !result.divergence.replayed.callsite
  ) {
    return attempt(true);
  }
  return result;
}

function startedEntry(options: InProcessOptions, toolset: Toolset): RunStartedEntry {
  const parent = options.fork?.parent[0];
  if (parent !== undefined && parent.kind !== "run.started") {
    throw new RewindError(
      "INVALID_INPUT",
      "A parent journal to fork must begin with its run.started entry",
    );
  }
  const seed = parent?.seed ?? options.seed ?? newSeed();
  const input = inCanonicalOrder(parent?.input ?? options.input ?? null);
  const at = parent?.at ?? options.startAt ?? DEFAULT_START;
  // In mock mode the run id follows from what defines the run, so a repeat gives the same journal.
  const digest = createHash("sha256")
    .update(`${options.script.hash}\n${seed}\n${at}\n${canonicalize(input)}`)
    .digest("hex");
  return {
    seq: 1,
    kind: "run.started",
    at,
    runId: options.runId ?? `run_mock_${digest.slice(0, 24)}`,
    scriptHash: options.script.hash,
    input,
    seed,
    // A fork replays its parent's history: it stays on the parent's epoch.
    epoch: parent?.epoch ?? options.epoch ?? newRunEpoch(),
    toolset: toolset.name,
    namespace: "default",
    ...(parent ? { parent: { runId: parent.runId, seq: options.fork?.at ?? 0 } } : {}),
  };
}

class MockRun {
  private readonly schedule = new VirtualSchedule();
  private readonly inFlight = new Map<number, Promise<{ call: CallEntry; outcome: CallOutcome }>>();
  private engine!: RunEngine;

  constructor(
    private readonly options: InProcessOptions,
    private readonly toolset: Toolset,
    private readonly started: RunStartedEntry,
  ) {}

  async run(
    instance: Parameters<typeof RunEngine.resume>[0],
    replayCallsites: boolean,
  ): Promise<InProcessResult> {
    const recorded = this.options.resume ?? [this.started];
    this.recordedUpTo = this.options.resume?.length ?? 0;
    let fresh: JournalEntry[];
    const engineOptions = {
      replayCallsites,
      maxValueBytes: this.options.sandbox.options.maxValueBytes,
    };
    try {
      if (this.options.fork !== undefined) {
        const forked = await RunEngine.fork(instance, this.started, this.options.fork.parent, {
          ...engineOptions,
          ...(this.options.fork.at === undefined ? {} : { at: this.options.fork.at }),
        });
        this.engine = forked.engine;
        // Reused entries are journaled as they were; their calls' effects already happened.
        this.recordedUpTo = forked.reused + 1;
        this.reused = forked.reused;
        this.commit([this.started, ...forked.entries]);
        this.rearm();
        this.act(forked.entries.filter((e) => e.seq > this.recordedUpTo));
        return await this.carryOn();
      }
      ({ engine: this.engine, entries: fresh } = await RunEngine.resume(
        instance,
        recorded,
        engineOptions,
      ));
    } catch (error) {
      if (error instanceof DivergenceError) {
        return { status: "diverged", journal: [...recorded], divergence: error.report };
      }
      throw error;
    }
    if (this.options.resume === undefined) this.commit([this.started, ...fresh]);
    else this.commit(fresh);
    this.rearm();
    this.act(fresh);
    return this.carryOn();
  }

  /** Delivers events in virtual time until the run ends or nothing more is scheduled. */
  private async carryOn(): Promise<InProcessResult> {
    let delivered = 0;
    while (this.engine.outcome === undefined) {
      // Tool results resolve as microtasks: yield now and then so a script that calls tools in
      // an endless loop cannot starve the host's event loop (timers, signals, a test's timeout).
      if (++delivered % 64 === 0) await new Promise((resolve) => setImmediate(resolve));
      await this.settleCalls();
      const event = this.schedule.next();
      if (event === undefined) break; // nothing more will happen: the run waits (for a signal)
      const entries = await this.engine.deliver(event);
      this.commit(entries);
      this.act(entries);
    }
    // A run that ended by a platform verdict still records its in-flight calls' outcomes.
    if (this.inFlight.size > 0) {
      for (const { call, outcome } of await Promise.all(this.inFlight.values())) {
        this.commit(this.engine.recordOutcome(outcomeEvent(call, outcome, this.engine.clock)));
      }
    }
    return this.result();
  }

  /** After a resume: calls journaled without an outcome run again; pending timers are re-armed. */
  private rearm(): void {
    if (this.engine.outcome !== undefined) return; // an ended run is only read, never acted on
    const journal = this.engine.journal;
    for (const call of this.engine.inFlightCalls()) {
      if (this.inFlight.has(call.seq) || this.isNew(call)) continue;
      const tool = this.toolset.tools.get(call.name);
      if (tool?.unsafeToRepeat) {
        this.commit(this.engine.fail(unsafeToRepeat(call, this.toolset.name)));
        return;
      }
      this.invoke(call);
    }
    for (const timer of this.engine.pendingTimers()) {
      if (!this.isNew(timer))
        this.schedule.add({
          due: timer.due,
          rank: 1,
          order: timer.seq,
          event: { kind: "timer.fired", timerSeq: timer.seq, at: timer.due },
        });
    }
    const delivered = journal.filter((e) => e.kind === "signal").length;
    (this.options.signals ?? []).forEach((signal, index) => {
      if (index < delivered) return; // already in the journal: delivered from there
      const due = this.started.at + signal.afterMs;
      this.schedule.add({
        due,
        rank: 2,
        order: index,
        event: { kind: "signal", name: signal.name, payload: signal.payload ?? null, at: due },
      });
    });
  }

  /** How much of the journal was recorded before this process: those entries' effects may have happened. */
  private recordedUpTo = 0;
  /** A fork's entries reused from its parent (after run.started). */
  private reused = 0;
  private isNew(entry: JournalEntry): boolean {
    return entry.seq > this.recordedUpTo;
  }

  private commit(entries: readonly JournalEntry[]): void {
    if (entries.length > 0) this.options.onCommit?.(entries);
  }

  /** Effects of committed entries: only now do calls run, timers arm and output show. */
  private act(entries: readonly JournalEntry[]): void {
    for (const entry of entries) {
      switch (entry.kind) {
        case "call": {
          if (this.engine.outcome !== undefined) break;
          if (!this.toolset.tools.has(entry.name)) {
            this.commit(
              this.engine.fail(toolNotFound(entry.name, this.toolset.name, this.toolset)),
            );
            break;
          }
          this.invoke(entry);
          break;
        }
        case "timer.set":
          this.schedule.add({
            due: entry.due,
            rank: 1,
            order: entry.seq,
            event: { kind: "timer.fired", timerSeq: entry.seq, at: entry.due },
          });
          break;
        case "timer.cancel":
          this.schedule.removeTimer(entry.timerSeq);
          break;
        case "output":
          this.options.onOutput?.(entry);
          break;
        default:
          break;
      }
    }
  }

  private invoke(call: CallEntry): void {
    const tool = this.toolset.tools.get(call.name)!;
    const running = invokeTool(tool, call, {
      runId: this.started.runId,
      toolset: this.toolset.name,
      maxValueBytes: this.options.sandbox.options.maxValueBytes,
      backoff: async () => {}, // virtual time: retries do not wait
    }).then((outcome) => ({ call, outcome }));
    this.inFlight.set(call.seq, running);
  }

  /**
   * Waits for every call in flight, then schedules their outcomes in virtual time. Waiting for all
   * (not the first) is what makes the order independent of real tool speed.
   */
  private async settleCalls(): Promise<void> {
    if (this.inFlight.size === 0 || this.engine.outcome !== undefined) return;
    const settled = await Promise.all(this.inFlight.values());
    this.inFlight.clear();
    for (const { call, outcome } of settled) {
      const due = call.at + (this.options.latency?.(call) ?? 0);
      this.schedule.add({ due, rank: 0, order: call.seq, event: outcomeEvent(call, outcome, due) });
    }
  }

  private result(): InProcessResult {
    const journal = this.engine.journal;
    const last = [...journal]
      .reverse()
      .find(
        (e) => e.kind === "run.completed" || e.kind === "run.failed" || e.kind === "run.cancelled",
      );
    switch (last?.kind) {
      case "run.completed":
        return { status: "completed", journal, result: last.result, ...this.forkInfo() };
      case "run.failed":
        return { status: "failed", journal, error: last.error, ...this.forkInfo() };
      case "run.cancelled":
        return { status: "cancelled", journal, ...this.forkInfo() };
      default:
        return { status: "waiting", journal, ...this.forkInfo() };
    }
  }

  private forkInfo(): { reused?: number } {
    return this.options.fork === undefined ? {} : { reused: this.reused };
  }
}
