import type { JournalEntry } from "@rewind/core";

/**
 * What a followed run is waiting for, from its journal so far: the calls in flight and the timers
 * set and not yet fired or cancelled. With neither, a waiting run can only be waiting for a
 * signal (what `waitForSignal` awaits is not journaled: only the signal, once it comes).
 */
export class RunProgress {
  private readonly calls = new Map<number, string>();
  private readonly timers = new Map<number, number>();

  see(entry: JournalEntry): void {
    switch (entry.kind) {
      case "call":
        this.calls.set(entry.seq, entry.name);
        break;
      case "call.result":
      case "call.error":
        this.calls.delete(entry.callSeq);
        break;
      case "timer.set":
        this.timers.set(entry.seq, entry.due);
        break;
      case "timer.fired":
      case "timer.cancel":
        this.timers.delete(entry.timerSeq);
        break;
      default:
        break;
    }
  }

  /** One line saying what the waiting run waits for, and how to move it on if that is a signal. */
  waitingFor(runId: string): string {
    const calls = [...new Set(this.calls.values())];
    if (calls.length > 0)
      return `waiting for ${calls.length === 1 ? "tool" : "tools"} ${calls.join(", ")} to answer`;
    const signal = `rewind signal ${runId} <name> [JSON]`;
    if (this.timers.size > 0) {
      const due = new Date(Math.min(...this.timers.values())).toISOString();
      return `waiting for a timer due ${due}, or a signal (${signal})`;
    }
    return `waiting for a signal: send it with ${signal}`;
  }
}
