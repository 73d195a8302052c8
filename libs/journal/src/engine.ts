import {
  RewindError,
  callIdOf,
  canonicalize,
  inCanonicalOrder,
  isEventEntry,
  isTerminalEntry,
  orderEntry,
  type CallEntry,
  type CommandEntry,
  type ErrorData,
  type EventEntry,
  type GuestCommand,
  type GuestEvent,
  type JournalEntry,
  type Json,
  type RunStartedEntry,
  type TimerSetEntry,
} from "@rewind/core";
import { labelCommand, labelEntry } from "./describe.js";
import { DivergenceError } from "./divergence.js";

/** The script side the engine drives: a sandbox instance, or anything that behaves like one. */
export interface ScriptDriver {
  start(input: RunStartedEntry["input"]): Promise<GuestCommand[]>;
  deliver(event: GuestEvent): Promise<GuestCommand[]>;
  /** Optional: skip callsite capture for commands the engine will only check against the journal. */
  captureCallsites?(on: boolean): void;
}

/** An outside event as it arrives, before it has a seq. */
export type IncomingEvent = DistributiveOmit<EventEntry, "seq">;
type DistributiveOmit<T, K extends keyof never> = T extends unknown ? Omit<T, K> : never;

export interface EngineOptions {
  /** Largest value (canonical JSON bytes) a command may carry; the platform's backstop. */
  maxValueBytes?: number;
  /** The idempotency key of the call journaled at `seq` (forks keep their parent's). */
  callIdFor?: (seq: number) => string;
  /**
   * Capture callsites even for recorded batches. Off by default (a stack capture per command is
   * a quarter of replay's cost); a caller that gets a DivergenceError whose replayed side lacks a
   * callsite replays again with this on to complete the report.
   */
  replayCallsites?: boolean;
}

export type Outcome = "completed" | "failed" | "cancelled";

/**
 * The replay engine: pure, no I/O. It turns what the script emits into journal entries, delivers
 * outside events one at a time (the order of delivery is the journal's order), and rebuilds a run
 * from any prefix of its journal by checking every recomputed command against the recorded one.
 *
 * The engine never performs an effect. A caller appends `step()`'s new entries and only then acts
 * on them (invokes calls, arms timers, shows output): nothing leaves before it is journaled.
 */
export class RunEngine {
  readonly journal: JournalEntry[];
  private readonly started: RunStartedEntry;
  private readonly seqOfId = new Map<number, number>();
  private readonly idOfSeq = new Map<number, number>();
  private readonly inFlight = new Map<number, CallEntry>();
  private readonly timers = new Map<number, TimerSetEntry>();
  private readonly maxValueBytes: number;
  private readonly callIdFor: (seq: number) => string;
  private readonly replayCallsites: boolean;
  private now: number;
  private ended: Outcome | undefined;
  /** Fork mode: a mismatch is where the new script takes over, not a divergence. */
  private forking = false;
  private forkPoint: number | undefined;

  private constructor(
    private readonly driver: ScriptDriver,
    started: RunStartedEntry,
    options: EngineOptions,
  ) {
    this.started = started;
    this.journal = [started];
    this.now = started.at;
    this.maxValueBytes = options.maxValueBytes ?? 4 * 1024 * 1024;
    this.callIdFor = options.callIdFor ?? ((seq) => callIdOf(started.runId, seq));
    this.replayCallsites = options.replayCallsites ?? false;
  }

  /**
   * Rebuilds a run from a recorded journal (at least its `run.started` entry) and returns the
   * engine with the entries the script emitted beyond the end of the journal: those continue the
   * run live and must be appended. Throws DivergenceError at the first mismatch.
   */
  static async resume(
    driver: ScriptDriver,
    recorded: readonly JournalEntry[],
    options: EngineOptions = {},
  ): Promise<{ engine: RunEngine; entries: JournalEntry[] }> {
    const started = recorded[0];
    if (started?.kind !== "run.started") {
      throw new RewindError(
        "INVALID_INPUT",
        "A journal must begin with its run.started entry (seq 1)",
      );
    }
    const engine = new RunEngine(driver, started, options);
    const entries = await engine.replay(recorded);
    return { engine, entries };
  }

  /**
   * Starts a fork: the new script (driver) replayed against its parent's journal. While its
   * commands match, the parent's entries are adopted as they are (a reused call keeps its callId,
   * its outcome is not asked for again); at the first difference, at `at` (a seq of the parent),
   * or where the parent ended, the fork goes on live. Returns every entry after `started`:
   * reused ones, then the first live ones.
   */
  static async fork(
    driver: ScriptDriver,
    started: RunStartedEntry,
    parent: readonly JournalEntry[],
    options: EngineOptions & { at?: number } = {},
  ): Promise<{ engine: RunEngine; entries: JournalEntry[]; reused: number }> {
    const prefix = parent.filter(
      (entry) => entry.seq > 1 && (options.at === undefined || entry.seq < options.at),
    );
    // Callsites on: the first live commands come from batches the parent also recorded.
    const engine = new RunEngine(driver, started, { ...options, replayCallsites: true });
    engine.forking = true;
    await engine.replay([started, ...prefix]);
    engine.forking = false;
    const reused = (engine.forkPoint ?? engine.journal.length + 1) - 2;
    return { engine, entries: engine.journal.slice(1), reused };
  }

  get runId(): string {
    return this.started.runId;
  }
  get outcome(): Outcome | undefined {
    return this.ended;
  }
  /** The logical time: the `at` of the last event delivered. */
  get clock(): number {
    return this.now;
  }
  /** Calls journaled whose outcome is not: after a resume, these run again with their callId. */
  inFlightCalls(): CallEntry[] {
    return [...this.inFlight.values()];
  }
  /** Timers set and neither fired nor cancelled. */
  pendingTimers(): TimerSetEntry[] {
    return [...this.timers.values()];
  }

  /**
   * Delivers one outside event (live). Returns the new entries to append: the event, then the
   * commands the script emitted in answer, in order.
   */
  async deliver(event: IncomingEvent): Promise<JournalEntry[]> {
    if (this.ended !== undefined) {
      throw new RewindError(
        "CONFLICT",
        `Run ${this.runId} has ended (${this.ended}); it takes no more events`,
      );
    }
    const at = Math.max(event.at, this.now);
    const entry = orderEntry({
      ...inCanonicalValues(event),
      seq: this.journal.length + 1,
      at,
    });
    const guestEvent = this.accept(entry);
    const commands = await this.driver.deliver(guestEvent);
    return [entry, ...this.record(commands)];
  }

  /**
   * Records the outcome of a call still in flight when the run ended by a platform verdict: the
   * script is not told (it has ended), but the journal says which effects happened.
   */
  recordOutcome(
    event: Extract<IncomingEvent, { kind: "call.result" | "call.error" }>,
  ): JournalEntry[] {
    if (this.ended === undefined)
      throw new RewindError("CONFLICT", "recordOutcome is for runs that have ended");
    if (!this.inFlight.delete(event.callSeq)) return [];
    const entry = orderEntry({
      ...event,
      seq: this.journal.length + 1,
      at: Math.max(event.at, this.now),
    });
    this.journal.push(entry);
    return [entry];
  }

  /** Ends the run because someone cancelled it (through its inbox). Calls in flight still record outcomes. */
  cancel(reason?: string): JournalEntry[] {
    if (this.ended !== undefined) return [];
    const entry = orderEntry({
      seq: this.journal.length + 1,
      kind: "run.cancelled",
      at: this.now,
      ...(reason === undefined ? {} : { reason }),
    });
    this.journal.push(entry);
    this.ended = "cancelled";
    return [entry];
  }

  /** Ends the run with a platform verdict (an unknown tool, a call unsafe to repeat, a limit). */
  fail(error: ErrorData): JournalEntry[] {
    if (this.ended !== undefined) return [];
    const entry = {
      seq: this.journal.length + 1,
      kind: "run.failed",
      at: this.now,
      error,
    } as const;
    this.journal.push(entry);
    this.ended = "failed";
    return [entry];
  }

  private async replay(recorded: readonly JournalEntry[]): Promise<JournalEntry[]> {
    // A batch is wholly in the journal when an event or the run's end comes after it: its
    // commands are only checked, and the recorded entries already carry their callsites.
    let boundary = 0;
    recorded.forEach((entry, index) => {
      if (isEventEntry(entry) || isTerminalEntry(entry)) boundary = index;
    });
    const callsitesFor = (index: number) =>
      this.driver.captureCallsites?.(this.replayCallsites || index >= boundary);

    callsitesFor(0);
    const queue = await this.driver.start(this.started.input);
    try {
      return await this.walk(recorded, queue, 1, callsitesFor);
    } finally {
      this.driver.captureCallsites?.(true); // live from here on
    }
  }

  private async walk(
    recorded: readonly JournalEntry[],
    queue: GuestCommand[],
    next: number,
    callsitesFor: (index: number) => void,
  ): Promise<JournalEntry[]> {
    for (;;) {
      // Match what the script emitted against the journal's commands, in order.
      while (queue.length > 0 && next < recorded.length) {
        const entry = recorded[next]!;
        if (this.forking && (isPlatformVerdict(entry) || isEventEntry(entry)))
          return this.branch(entry, queue);
        if (isPlatformVerdict(entry)) return this.adoptVerdict(entry, recorded, next);
        if (isEventEntry(entry)) this.diverge(entry, queue[0]);
        const command = queue.shift()!;
        if (this.forking && !sameCommand(entry as CommandEntry, command, this.idOfSeq))
          return this.branch(entry, [command, ...queue]);
        this.match(entry as CommandEntry, command);
        next++;
      }
      if (next >= recorded.length) return this.branch(undefined, queue); // the journal ends: continue live
      const entry = recorded[next]!;
      // A fork does not inherit its parent's ending: at a verdict or a cancel it goes on live.
      if (this.forking && (isPlatformVerdict(entry) || entry.kind === "run.cancelled"))
        return this.branch(entry, queue);
      if (isPlatformVerdict(entry)) return this.adoptVerdict(entry, recorded, next);
      switch (entry.kind) {
        case "call.result":
        case "call.error":
        case "timer.fired":
        case "signal":
          callsitesFor(next);
          queue = await this.driver.deliver(this.accept(entry));
          next++;
          continue;
        case "run.cancelled":
          return this.adoptVerdict(entry, recorded, next);
        case "run.quarantined":
        case "run.released":
          this.journal.push(entry);
          next++;
          continue;
        default:
          if (this.forking) return this.branch(entry, queue); // the script no longer emits it
          return this.diverge(entry, undefined); // a command the script no longer emits
      }
    }
  }

  /** Where replay stops and the run goes on live: the commands emitted from there are new entries. */
  private branch(at: JournalEntry | undefined, queue: readonly GuestCommand[]): JournalEntry[] {
    this.forkPoint = at?.seq ?? this.journal.length + 1;
    return this.record(queue);
  }

  /** Validates an event against the run's state and returns what the guest is told. */
  private accept(entry: EventEntry): GuestEvent {
    const expected = this.journal.length + 1;
    if (entry.seq !== expected) {
      throw new RewindError(
        "CONFLICT",
        `Journal of run ${this.runId} has seq ${entry.seq} where ${expected} was expected`,
      );
    }
    this.now = entry.at;
    let guest: GuestEvent;
    switch (entry.kind) {
      case "call.result":
      case "call.error": {
        if (!this.inFlight.delete(entry.callSeq)) {
          throw new RewindError(
            "CONFLICT",
            `No call at seq ${entry.callSeq} of run ${this.runId} awaits an outcome`,
          );
        }
        const id = this.idOfSeq.get(entry.callSeq)!;
        guest =
          entry.kind === "call.result"
            ? { type: "call.result", id, at: entry.at, result: entry.result }
            : { type: "call.error", id, at: entry.at, error: entry.error };
        break;
      }
      case "timer.fired":
        if (!this.timers.delete(entry.timerSeq)) {
          throw new RewindError(
            "CONFLICT",
            `No timer set at seq ${entry.timerSeq} of run ${this.runId} is pending`,
          );
        }
        guest = { type: "timer.fired", id: this.idOfSeq.get(entry.timerSeq)!, at: entry.at };
        break;
      case "signal":
        guest = { type: "signal", name: entry.name, at: entry.at, payload: entry.payload };
        break;
    }
    this.journal.push(entry);
    return guest;
  }

  /** Checks a recomputed command against its recorded entry, then adopts the recorded entry. */
  private match(entry: CommandEntry, command: GuestCommand): void {
    if (!sameCommand(entry, command, this.idOfSeq)) this.diverge(entry, command);
    this.adopt(entry, command);
  }

  /** Turns live commands into new journal entries (seq, time, callId assigned here). */
  private record(commands: readonly GuestCommand[]): JournalEntry[] {
    const entries: JournalEntry[] = [];
    for (const command of commands) {
      if (this.ended !== undefined) break;
      const entry = this.entryFor(command, this.journal.length + 1);
      this.adopt(entry, command);
      entries.push(entry);
    }
    return entries;
  }

  private entryFor(command: GuestCommand, seq: number): CommandEntry {
    // Keys in one order (seq, kind, at, …) so equal journals are equal byte for byte.
    const at = this.now;
    const site =
      "callsite" in command && command.callsite !== "" ? { callsite: command.callsite } : {};
    switch (command.type) {
      case "call": {
        const args = this.journalValue(command.args, `The arguments of tools.${command.name}()`);
        if ("tooLarge" in args)
          return { seq, kind: "run.failed", at, ...site, error: args.tooLarge };
        return {
          seq,
          kind: "call",
          at,
          ...site,
          name: command.name,
          args: args.value,
          callId: this.callIdFor(seq),
        };
      }
      case "timer.set":
        return { seq, kind: "timer.set", at, ...site, due: command.due };
      case "timer.cancel":
        return {
          seq,
          kind: "timer.cancel",
          at,
          ...site,
          timerSeq: this.seqOfId.get(command.id) ?? 0,
        };
      case "output":
        return { seq, kind: "output", at, ...site, stream: command.stream, text: command.text };
      case "complete": {
        const result = this.journalValue(command.result, "The run's result");
        if ("tooLarge" in result) return { seq, kind: "run.failed", at, error: result.tooLarge };
        return { seq, kind: "run.completed", at, result: result.value };
      }
      case "fail":
        return { seq, kind: "run.failed", at, error: command.error };
    }
  }

  /** Applies an entry (recorded or new) to the run's state. */
  private adopt(entry: CommandEntry, command: GuestCommand): void {
    this.journal.push(entry);
    switch (entry.kind) {
      case "call":
        this.bind(command, entry.seq);
        this.inFlight.set(entry.seq, entry);
        break;
      case "timer.set":
        this.bind(command, entry.seq);
        this.timers.set(entry.seq, entry);
        break;
      case "timer.cancel":
        this.timers.delete(entry.timerSeq);
        break;
      case "run.completed":
        this.ended = "completed";
        break;
      case "run.failed":
        this.ended = "failed";
        break;
      case "output":
        break;
    }
  }

  private bind(command: GuestCommand, seq: number): void {
    const id = (command as { id: number }).id;
    this.seqOfId.set(id, seq);
    this.idOfSeq.set(seq, id);
  }

  /** A recorded platform verdict ends the replay as it ended the run, whatever the script does. */
  private adoptVerdict(
    entry: JournalEntry,
    recorded: readonly JournalEntry[],
    at: number,
  ): JournalEntry[] {
    this.journal.push(entry);
    this.ended = entry.kind === "run.cancelled" ? "cancelled" : "failed";
    // After a verdict only the outcomes of calls that were in flight, and bookkeeping, may follow.
    for (const rest of recorded.slice(at + 1)) {
      if (rest.kind === "call.result" || rest.kind === "call.error")
        this.inFlight.delete(rest.callSeq);
      else if (rest.kind !== "run.quarantined" && rest.kind !== "run.released") {
        throw new RewindError(
          "INVALID_INPUT",
          `Journal of run ${this.runId} has a ${rest.kind} entry after its end at seq ${entry.seq}`,
        );
      }
      this.journal.push(rest);
    }
    return [];
  }

  /** The value in canonical key order, or the platform's verdict when it is too large. */
  private journalValue(value: Json, what: string): { value: Json } | { tooLarge: ErrorData } {
    const canonical = canonicalize(value);
    const bytes = Buffer.byteLength(canonical);
    if (bytes <= this.maxValueBytes) return { value: JSON.parse(canonical) as Json };
    return {
      tooLarge: {
        name: "RewindError",
        code: "PAYLOAD_TOO_LARGE",
        message: `${what} is ${bytes} bytes of JSON, over the limit of ${this.maxValueBytes} bytes: pass a smaller value`,
      },
    };
  }

  private diverge(entry: JournalEntry, command: GuestCommand | undefined): never {
    const start = this.started.at;
    const report = {
      runId: this.runId,
      seq: entry.seq,
      matched: entry.seq - 1,
      recorded: labelEntry(entry, start),
      ...(command ? { replayed: labelCommand(command, start, (id) => this.seqOfId.get(id)) } : {}),
    };
    throw new DivergenceError(report);
  }
}

/** An outside event with its value in canonical key order, as the journal holds it. */
function inCanonicalValues(event: IncomingEvent): IncomingEvent {
  switch (event.kind) {
    case "call.result":
      return { ...event, result: inCanonicalOrder(event.result) };
    case "signal":
      return { ...event, payload: inCanonicalOrder(event.payload) };
    default:
      return event;
  }
}

function isPlatformVerdict(entry: JournalEntry): boolean {
  return entry.kind === "run.failed" && entry.error.code !== "SCRIPT_ERROR";
}

/** Equal values: the same JSON text (the common case on replay), else the same canonical text. */
function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b) || canonicalize(a) === canonicalize(b);
}

/** Equality on replay: kind, name, canonical arguments, due time, output bytes. Never callsites. */
function sameCommand(
  entry: CommandEntry,
  command: GuestCommand,
  idOfSeq: Map<number, number>,
): boolean {
  switch (entry.kind) {
    case "call":
      return (
        command.type === "call" &&
        command.name === entry.name &&
        sameValue(command.args, entry.args)
      );
    case "timer.set":
      return command.type === "timer.set" && command.due === entry.due;
    case "timer.cancel":
      return command.type === "timer.cancel" && idOfSeq.get(entry.timerSeq) === command.id;
    case "output":
      return (
        command.type === "output" && command.stream === entry.stream && command.text === entry.text
      );
    case "run.completed":
      return command.type === "complete" && sameValue(command.result, entry.result);
    case "run.failed":
      return (
        command.type === "fail" &&
        command.error.name === entry.error.name &&
        command.error.message === entry.error.message
      );
  }
}
