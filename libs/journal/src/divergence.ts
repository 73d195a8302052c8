import { RewindError } from "@rewind/core";
import type { EntryLabel } from "./describe.js";

/** Where a replay left its journal: both sides, labelled, with their callsites. */
export interface DivergenceReport {
  runId: string;
  /** The journal seq of the first entry that does not match. */
  seq: number;
  /** Entries that matched before it. */
  matched: number;
  /** What the journal holds at `seq`. */
  recorded: EntryLabel;
  /** What the script did instead; absent when it emitted nothing more before the next event. */
  replayed?: EntryLabel;
}

/** A replay that does not match its journal (code DIVERGENCE): the run is quarantined, never failed. */
export class DivergenceError extends RewindError {
  override readonly name = "DivergenceError";
  constructor(readonly report: DivergenceReport) {
    super("DIVERGENCE", formatDivergence(report), { ...report });
  }
}

export function formatDivergence(report: DivergenceReport): string {
  const side = (label: EntryLabel) =>
    `${label.label}${label.callsite ? `   at ${label.callsite}` : ""}`;
  const replayed = report.replayed
    ? `but the script now emits\n    ${side(report.replayed)}`
    : "but the script emitted nothing more before that point";
  return (
    `Run ${report.runId} diverges from its journal at seq ${report.seq} ` +
    `(${report.matched} ${report.matched === 1 ? "entry" : "entries"} matched before it).\n` +
    `  the journal recorded\n    ${side(report.recorded)}\n  ${replayed}`
  );
}
