import type { JournalEntry } from "@rewind/core";
import { entrySummary } from "../format.js";

/** One journal entry as a model reads it: seq, kind, what (name, short args or result), where. */
export interface JournalLine {
  seq: number;
  kind: string;
  what: string;
  callsite?: string;
}

export function journalLines(entries: readonly JournalEntry[]): JournalLine[] {
  return entries.map((e) => ({
    seq: e.seq,
    kind: e.kind,
    what: entrySummary(e),
    ...(e.callsite ? { callsite: e.callsite } : {}),
  }));
}

/** `#7 call charge({ orderId: "A1" })  @ order.ts:5:20` */
export function formatLine(line: JournalLine): string {
  return `#${line.seq} ${line.kind} ${line.what}${line.callsite ? `  @ ${line.callsite}` : ""}`;
}
