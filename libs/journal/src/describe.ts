import { shortForm, type GuestCommand, type JournalEntry } from "@rewind/core";

/** One side of a divergence: what it was, in words, and where in the script it came from. */
export interface EntryLabel {
  kind: string;
  label: string;
  callsite?: string;
}

/** "call charge({ orderId: "A1" })", "output stdout "hello\n"", "timer.set due +10d" … */
export function labelEntry(entry: JournalEntry, start: number): EntryLabel {
  const at = (label: string): EntryLabel =>
    entry.callsite
      ? { kind: entry.kind, label, callsite: entry.callsite }
      : { kind: entry.kind, label };
  switch (entry.kind) {
    case "call":
      return at(`call ${entry.name}(${shortForm(entry.args)})`);
    case "timer.set":
      return at(`timer.set due ${relative(entry.due - start)}`);
    case "timer.cancel":
      return at(`timer.cancel of the timer set at seq ${entry.timerSeq}`);
    case "output":
      return at(`output ${entry.stream} ${shortForm(entry.text)}`);
    case "run.completed":
      return at(`run.completed with ${shortForm(entry.result)}`);
    case "run.failed":
      return at(`run.failed: ${entry.error.name}: ${entry.error.message}`);
    case "call.result":
      return at(`call.result of the call at seq ${entry.callSeq}`);
    case "call.error":
      return at(`call.error of the call at seq ${entry.callSeq}: ${entry.error.message}`);
    case "timer.fired":
      return at(`timer.fired for the timer set at seq ${entry.timerSeq}`);
    case "signal":
      return at(`signal ${JSON.stringify(entry.name)} ${shortForm(entry.payload)}`);
    default:
      return at(entry.kind);
  }
}

export function labelCommand(
  command: GuestCommand,
  start: number,
  seqOfId: (id: number) => number | undefined,
): EntryLabel {
  switch (command.type) {
    case "call":
      return {
        kind: "call",
        label: `call ${command.name}(${shortForm(command.args)})`,
        callsite: command.callsite,
      };
    case "timer.set":
      return {
        kind: "timer.set",
        label: `timer.set due ${relative(command.due - start)}`,
        callsite: command.callsite,
      };
    case "timer.cancel":
      return {
        kind: "timer.cancel",
        label: `timer.cancel of the timer set at seq ${seqOfId(command.id) ?? "?"}`,
        callsite: command.callsite,
      };
    case "output":
      return {
        kind: "output",
        label: `output ${command.stream} ${shortForm(command.text)}`,
        callsite: command.callsite,
      };
    case "complete":
      return { kind: "run.completed", label: `run.completed with ${shortForm(command.result)}` };
    case "fail":
      return {
        kind: "run.failed",
        label: `run.failed: ${command.error.name}: ${command.error.message}`,
      };
  }
}

/** Milliseconds since the run's start as "+1.5s", "+10d". */
export function relative(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, "d"],
    [3_600_000, "h"],
    [60_000, "m"],
    [1000, "s"],
  ];
  for (const [size, unit] of units) {
    if (ms >= size && ms % (size / 10) === 0) return `+${ms / size}${unit}`;
  }
  return `+${ms}ms`;
}
