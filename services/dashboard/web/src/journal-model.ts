/**
 * What the run page derives from a journal: the line of the script's files each entry belongs to
 * (a command by its callsite; a result, error or firing by the command it answers), and what was
 * in flight after each seq.
 */
import type { JournalEntry } from "./api.js";
import { lineOf, stackFrames } from "./format.js";

/** A line of one of the script's files. */
export interface Place {
  file: string;
  line: number;
}

export interface PinnedJournal {
  /** The entries of each line, by file, in seq order. */
  byFile: Map<string, Map<number, JournalEntry[]>>;
  /** Where each entry is pinned, by seq. */
  placeOfSeq: Map<number, Place>;
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

/**
 * Pins the journal's entries to lines of the script's `files` (their names as the source map
 * gives them): a command by its callsite, whose file may be named shorter (`price.ts` for
 * `lib/price.ts`); an answer where its command is.
 */
export function pinJournal(
  entries: readonly JournalEntry[],
  files: readonly string[],
): PinnedJournal {
  const byFile = new Map<string, Map<number, JournalEntry[]>>();
  const placeOfSeq = new Map<number, Place>();
  const answerOf = new Map<number, JournalEntry>();
  const fileOf = fileResolver(files);
  for (const entry of entries) {
    const answered = commandSeqOf(entry);
    if (answered !== undefined && entry.kind !== "timer.cancel") answerOf.set(answered, entry);
    const own = lineOf(entry.callsite);
    const file = own === undefined ? undefined : fileOf(own.file);
    const place =
      own !== undefined
        ? file === undefined
          ? undefined
          : { file, line: own.line }
        : answered !== undefined
          ? placeOfSeq.get(answered)
          : entry.kind === "run.failed"
            ? thrownIn(entry.error.stack, fileOf)
            : undefined;
    if (place === undefined) continue;
    placeOfSeq.set(entry.seq, place);
    const lines = byFile.get(place.file) ?? new Map<number, JournalEntry[]>();
    byFile.set(place.file, lines);
    const list = lines.get(place.line) ?? [];
    list.push(entry);
    lines.set(place.line, list);
  }
  return { byFile, placeOfSeq, answerOf };
}

/**
 * A failure has no callsite of its own: it is pinned where it was thrown, the first frame of its
 * (source-mapped) stack in one of the script's files.
 */
function thrownIn(
  stack: string | undefined,
  fileOf: (name: string) => string | undefined,
): Place | undefined {
  for (const frame of stackFrames(stack)) {
    const at = lineOf(frame);
    const file = at === undefined ? undefined : fileOf(at.file);
    if (at !== undefined && file !== undefined) return { file, line: at.line };
  }
  return undefined;
}

/** The one of `files` a callsite's file name means (itself, or the one it ends), memoised. */
function fileResolver(files: readonly string[]): (name: string) => string | undefined {
  const known = new Map<string, string | undefined>();
  const base = (name: string) => name.slice(name.lastIndexOf("/") + 1);
  return (name) => {
    if (!known.has(name))
      known.set(
        name,
        files.find((file) => file === name) ??
          files.find((file) => file.endsWith(`/${name}`) || name.endsWith(`/${file}`)) ??
          files.find((file) => base(file) === base(name)),
      );
    return known.get(name);
  };
}

/** A place in words: `line 5` in the entry file, `lib/price.ts line 2` in another. */
export function placeText(place: Place | undefined, entryFile: string): string {
  if (place === undefined) return "–";
  return place.file === entryFile ? `line ${place.line}` : `${place.file} line ${place.line}`;
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

/** Where the run stood after `seq`: the place of the last entry up to it that has one. */
export function placeAfter(pinned: PinnedJournal, entries: readonly JournalEntry[], seq: number) {
  let place: Place | undefined;
  for (const entry of entries) {
    if (entry.seq > seq) break;
    place = pinned.placeOfSeq.get(entry.seq) ?? place;
  }
  return place;
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
