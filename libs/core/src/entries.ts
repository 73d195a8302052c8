import type { Json } from "./json.js";

/**
 * The journal of a run: entries numbered 1, 2, 3 … with no gaps. Values are inline here (this is
 * the in-memory and journal-file form); the store keeps them by reference (`sha256:…`).
 *
 * Commands come from the script and are recomputed and checked on replay; events come from
 * outside and are delivered from the journal, in the order they were first delivered.
 */
export type JournalEntry = CommandEntry | EventEntry | PlatformEntry;

interface EntryBase {
  /** Position in the journal: 1, 2, 3 … with no gaps. */
  seq: number;
  /** Logical time in ms since the Unix epoch: the time of the last event the script had seen. */
  at: number;
  /** `file:line:column` in the original script source of the line that caused a command. */
  callsite?: string;
}

/** Data describing an error as it crosses the sandbox wall or is stored: never a live Error. */
export interface ErrorData {
  name: string;
  message: string;
  /** A string code from the error table (`SCRIPT_ERROR`, `CPU_LIMIT`, …) or one a tool chose. */
  code?: string;
  /** Source-mapped stack of a script error; never a host stack. */
  stack?: string;
}

// ---- platform

export interface RunStartedEntry extends EntryBase {
  kind: "run.started";
  runId: string;
  scriptHash: string;
  input: Json;
  /** 256-bit seed of the run's ChaCha20 stream, as 64 hex digits. */
  seed: string;
  epoch: number;
  toolset: string;
  namespace: string;
  parent?: { runId: string; seq: number };
}
export interface RunCancelledEntry extends EntryBase {
  kind: "run.cancelled";
  reason?: string;
}
export interface RunQuarantinedEntry extends EntryBase {
  kind: "run.quarantined";
  report: Json;
}
export interface RunReleasedEntry extends EntryBase {
  kind: "run.released";
  by: string;
  epoch?: number;
}
export type PlatformEntry =
  RunStartedEntry | RunCancelledEntry | RunQuarantinedEntry | RunReleasedEntry;

// ---- commands (emitted by the script)

export interface CallEntry extends EntryBase {
  kind: "call";
  name: string;
  args: Json;
  /** Idempotency key: the same for every execution of this call, unique otherwise. */
  callId: string;
}
export interface TimerSetEntry extends EntryBase {
  kind: "timer.set";
  /** Logical time at which the timer is due. */
  due: number;
}
export interface TimerCancelEntry extends EntryBase {
  kind: "timer.cancel";
  timerSeq: number;
}
export interface OutputEntry extends EntryBase {
  kind: "output";
  stream: "stdout" | "stderr";
  text: string;
}
export interface RunCompletedEntry extends EntryBase {
  kind: "run.completed";
  result: Json;
}
/**
 * A run's failure. With code `SCRIPT_ERROR` the script threw (a command, recomputed on replay);
 * any other code is the platform's verdict (a limit, an unknown tool) and ends replay as recorded.
 */
export interface RunFailedEntry extends EntryBase {
  kind: "run.failed";
  error: ErrorData;
  /** Who ended it, when an operator gave up on it in quarantine (code GIVEN_UP). */
  by?: string;
}
export type CommandEntry =
  CallEntry | TimerSetEntry | TimerCancelEntry | OutputEntry | RunCompletedEntry | RunFailedEntry;

// ---- events (from outside)

export interface CallResultEntry extends EntryBase {
  kind: "call.result";
  callSeq: number;
  result: Json;
  /** How many times the tool was tried for this outcome (its retries), when more than once. */
  attempts?: number;
}
export interface CallErrorEntry extends EntryBase {
  kind: "call.error";
  callSeq: number;
  error: ErrorData;
  /** How many times the tool was tried for this outcome (its retries), when more than once. */
  attempts?: number;
}
export interface TimerFiredEntry extends EntryBase {
  kind: "timer.fired";
  timerSeq: number;
}
export interface SignalEntry extends EntryBase {
  kind: "signal";
  name: string;
  payload: Json;
}
export type EventEntry = CallResultEntry | CallErrorEntry | TimerFiredEntry | SignalEntry;

export type EntryKind = JournalEntry["kind"];

const COMMAND_KINDS: ReadonlySet<EntryKind> = new Set<EntryKind>([
  "call",
  "timer.set",
  "timer.cancel",
  "output",
  "run.completed",
  "run.failed",
]);
const EVENT_KINDS: ReadonlySet<EntryKind> = new Set<EntryKind>([
  "call.result",
  "call.error",
  "timer.fired",
  "signal",
]);

export function isCommandEntry(entry: JournalEntry): entry is CommandEntry {
  return COMMAND_KINDS.has(entry.kind);
}
export function isEventEntry(entry: JournalEntry): entry is EventEntry {
  return EVENT_KINDS.has(entry.kind);
}
/** Entries that end a run: nothing follows them but platform bookkeeping. */
export function isTerminalEntry(entry: JournalEntry): boolean {
  return (
    entry.kind === "run.completed" || entry.kind === "run.failed" || entry.kind === "run.cancelled"
  );
}

/**
 * The order of an entry's keys: seq, kind, at, callsite, then the kind's own fields in this order.
 * Equal journals are then equal byte for byte, wherever they were stored (jsonb keeps no order).
 */
const FIELD_ORDER = [
  "runId",
  "scriptHash",
  "input",
  "seed",
  "epoch",
  "toolset",
  "namespace",
  "parent",
  "name",
  "args",
  "callId",
  "callSeq",
  "result",
  "error",
  "due",
  "timerSeq",
  "stream",
  "text",
  "payload",
  "reason",
  "report",
  "by",
];
const RANK = new Map(FIELD_ORDER.map((field, i) => [field, i]));
const LEADING = new Set(["seq", "kind", "at", "callsite"]);

/**
 * The kind's own fields of an entry of this shape (its keys, in their order), sorted. Entries
 * come in a few shapes, so the sort runs once per shape, not once per entry on the hot path.
 */
const orders = new Map<string, readonly string[]>();
function fieldOrder(keys: string[]): readonly string[] {
  const shape = JSON.stringify(keys); // unambiguous, whatever a key holds
  let order = orders.get(shape);
  if (order === undefined) {
    order = keys
      // Names an object inherits (`__proto__`, `constructor`, …) are no entry's fields: skipped,
      // so a journal read back can never set the entry's prototype.
      .filter((k) => !LEADING.has(k) && !(k in Object.prototype))
      .sort((a, b) => (RANK.get(a) ?? 99) - (RANK.get(b) ?? 99) || (a < b ? -1 : 1));
    // Shapes come from code, but a journal read back may carry anything: the memo stays bounded.
    if (orders.size < 256) orders.set(shape, order);
  }
  return order;
}

export function orderEntry<T extends JournalEntry>(entry: T): T {
  const source = entry as unknown as Record<string, unknown>;
  const ordered: Record<string, unknown> = { seq: source.seq, kind: source.kind, at: source.at };
  if (source.callsite !== undefined) ordered.callsite = source.callsite;
  for (const key of fieldOrder(Object.keys(source)))
    if (source[key] !== undefined) ordered[key] = source[key];
  return ordered as unknown as T;
}
