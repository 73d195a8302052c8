/**
 * What the run page derives from a journal: the script line each entry belongs to (a command by
 * its callsite; a result, error or firing by the command it answers), and what was in flight
 * after each seq.
 */
import type { JournalEntry } from "./api.js";
import { lineOf } from "./format.js";

export interface PinnedJournal {
  /** The entries of each line of the script file, in seq order. */
  byLine: Map<number, JournalEntry[]>;
  /** The line each entry is pinned to, by seq. */
  lineOfSeq: Map<number, number>;
  /** The entry answering a call or firing a timer, by the command's seq. */
  answerOf: Map<number, JournalEntry>;
}

/** The seq of the command an event answers (call.result → its call), if it answers one. */
export function commandSeqOf(entry: JournalEntry): number | undefined {
  switch (entry.kind) {
    case "call.result":
    case "call.error":
      return entry.callSeq;
    case "timer.fired":
    case "timer.cancel":
      return entry.timerSeq;
    default:
      return undefined;
  }
}

/** Pins the journal's entries to lines of `file` (the script's entry file). */
export function pinJournal(entries: readonly JournalEntry[], file: string): PinnedJournal {
  const byLine = new Map<number, JournalEntry[]>();
  const lineOfSeq = new Map<number, number>();
  const answerOf = new Map<number, JournalEntry>();
  for (const entry of entries) {
    const answered = commandSeqOf(entry);
    if (answered !== undefined && entry.kind !== "timer.cancel") answerOf.set(answered, entry);
    const own = lineOf(entry.callsite);
    const line =
      own !== undefined
        ? own.file === file
          ? own.line
          : undefined
        : answered !== undefined
          ? lineOfSeq.get(answered)
          : undefined;
    if (line === undefined) continue;
    lineOfSeq.set(entry.seq, line);
    const list = byLine.get(line) ?? [];
    list.push(entry);
    byLine.set(line, list);
  }
  return { byLine, lineOfSeq, answerOf };
}

/** Calls and timers started at or before `seq` and not yet answered by then. */
export function inFlightAfter(entries: readonly JournalEntry[], seq: number): JournalEntry[] {
  const open = new Map<number, JournalEntry>();
  for (const entry of entries) {
    if (entry.seq > seq) break;
    if (entry.kind === "call" || entry.kind === "timer.set") open.set(entry.seq, entry);
    const answered = commandSeqOf(entry);
    if (answered !== undefined) open.delete(answered);
  }
  return [...open.values()];
}

/** The line the run stood at after `seq`: that of the last entry up to it that has one. */
export function lineAfter(pinned: PinnedJournal, entries: readonly JournalEntry[], seq: number) {
  let line: number | undefined;
  for (const entry of entries) {
    if (entry.seq > seq) break;
    line = pinned.lineOfSeq.get(entry.seq) ?? line;
  }
  return line;
}

/** An entry in a few words: `call charge`, `timer.set 3 d`, `signal approval`. */
export function entryTitle(entry: JournalEntry): string {
  switch (entry.kind) {
    case "call":
      return `call ${entry.name}`;
    case "signal":
      return `signal ${entry.name}`;
    case "output":
      return `output (${entry.stream})`;
    case "call.result":
      return `result of #${entry.callSeq}`;
    case "call.error":
      return `error of #${entry.callSeq}`;
    case "timer.fired":
      return `timer #${entry.timerSeq} fired`;
    case "timer.cancel":
      return `timer #${entry.timerSeq} cancelled`;
    default:
      return entry.kind;
  }
}
