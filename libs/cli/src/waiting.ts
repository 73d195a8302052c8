import type { JournalEntry } from "@rewind/core";
import { dueDate } from "./format.js";

/**
 * What a waiting run waits for, read from its journal: calls with no outcome yet, timers neither
 * fired nor cancelled. A signal the script awaits leaves no entry (it is delivered, not emitted),
 * so a run with neither is waiting for a signal.
 */
export function waitingFor(entries: readonly JournalEntry[], runId = "<run>"): string[] {
  const calls = new Map<number, string>();
  const timers = new Map<number, string>();
  for (const entry of entries) {
    const at = entry.callsite ? ` at ${entry.callsite}` : "";
    switch (entry.kind) {
      case "call":
        calls.set(entry.seq, `tool ${entry.name} (call seq ${entry.seq}${at})`);
        break;
      case "call.result":
      case "call.error":
        calls.delete(entry.callSeq);
        break;
      case "timer.set":
        timers.set(entry.seq, `timer due ${dueDate(entry.due)} (seq ${entry.seq}${at})`);
        break;
      case "timer.fired":
      case "timer.cancel":
        timers.delete(entry.timerSeq);
        break;
      default:
        break;
    }
  }
  const waits = [...calls.values(), ...timers.values()];
  return waits.length > 0
    ? waits
    : [`a signal (nothing else is pending): send it with rewind signal ${runId} <name> [JSON]`];
}
