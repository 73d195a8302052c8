import { RewindError, type JournalEntry } from "@rewind/core";

/**
 * The first entry of a journal a capture policy redacted (docs/capture-policy.md): the script saw
 * the real value live, the journal holds a marker, so a replay through it would feed the script
 * other data (or find its own command differ). Where a run stops being strictly replayable.
 */
export function firstRedacted(
  journal: readonly JournalEntry[],
): { seq: number; rules: string[] } | undefined {
  for (const entry of journal) {
    const rules = (entry as { redacted?: unknown }).redacted;
    if (Array.isArray(rules) && rules.length > 0)
      return { seq: entry.seq, rules: rules.map(String) };
  }
  return undefined;
}

/**
 * Why a cold load of such a run stops (the run is quarantined with this, never replayed on
 * other data): what it names is the seq and the rules, what it says to do is give up or fork.
 */
export function notReplayable(runId: string, seq: number, rules: readonly string[]): RewindError {
  return new RewindError(
    "CONFLICT",
    `Run ${runId} is not strictly replayable: its entry ${seq} was redacted by the capture policy ` +
      `(${rules.join(", ")}), so replaying it would hand the script a marker instead of the value ` +
      `it saw. It lost its live sandbox (a restart, an eviction) and cannot be rebuilt from its ` +
      `journal: give up on it, or fork it before seq ${seq} (rewind fork --at ${seq})`,
    { runId, seq, rules: [...rules] },
  );
}
