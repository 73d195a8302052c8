import { shortForm, type JournalEntry } from "@rewind/core";
import { relative } from "@rewind/journal";

const color = process.stdout.isTTY && process.env.NO_COLOR === undefined;
const paint = (code: number) => (text: string) =>
  color ? `\u001b[${code}m${text}\u001b[0m` : text;
export const dim = paint(2);
export const green = paint(32);
export const red = paint(31);
export const yellow = paint(33);

export function statusColor(status: string): string {
  if (status === "completed") return green(status);
  if (status === "failed" || status === "quarantined") return red(status);
  if (status === "cancelled") return dim(status);
  return yellow(status);
}

/** A timer's due time as a date; an epoch-1 journal may hold one past the last date there is. */
export function dueDate(due: number): string {
  const date = new Date(due);
  return Number.isNaN(date.getTime())
    ? `${due} ms after 1970 (past the last date)`
    : date.toISOString();
}

/** A call's outcome that took its tool more than one try says so. */
const tries = (attempts: number | undefined) =>
  attempts === undefined ? "" : ` (${attempts} attempts)`;

/** One line of an entry for the journal table: what it is, in a few words. */
export function entrySummary(entry: JournalEntry): string {
  switch (entry.kind) {
    case "run.started":
      return `input ${shortForm(entry.input, 50)}`;
    case "call":
      return `${entry.name}(${shortForm(entry.args, 50)})`;
    case "call.result":
      return `seq ${entry.callSeq} → ${shortForm(entry.result, 50)}${tries(entry.attempts)}`;
    case "call.error":
      return `seq ${entry.callSeq} ✗ ${entry.error.message.slice(0, 50)}${tries(entry.attempts)}`;
    case "timer.set":
      return `due ${dueDate(entry.due)}`;
    case "timer.cancel":
    case "timer.fired":
      return `timer seq ${entry.timerSeq}`;
    case "signal":
      return `${entry.name} ${shortForm(entry.payload, 40)}`;
    case "output":
      return `${entry.stream}: ${shortForm(entry.text.replace(/\n$/, ""), 50)}`;
    case "run.completed":
      return shortForm(entry.result, 60);
    case "run.failed":
      return `${entry.error.code ?? entry.error.name}: ${entry.error.message.slice(0, 60)}`;
    default:
      return "";
  }
}

/** The journal as a table: seq, kind, what, callsite, logical time since the start. */
export function journalTable(entries: readonly JournalEntry[], reusedUpTo?: number): string {
  const start = entries[0]?.at ?? 0;
  const rows = entries.map((e) => [
    String(e.seq),
    ...(reusedUpTo === undefined
      ? []
      : [e.seq === 1 ? "" : e.seq <= reusedUpTo ? "reused" : "live"]),
    e.kind,
    entrySummary(e),
    e.callsite ?? "",
    relative(e.at - start),
  ]);
  const header = [
    "seq",
    ...(reusedUpTo === undefined ? [] : ["fork"]),
    "kind",
    "what",
    "callsite",
    "time",
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [dim(line(header)), ...rows.map(line)].join("\n");
}
