import {
  effectiveLimits,
  limitExceeded,
  utf8Length,
  type JournalEntry,
  type LimitName,
  type Limits,
  type RewindError,
} from "@rewind/core";
import type { Store } from "@rewind/store";

/**
 * What one run has journaled so far, against the limits of its namespace that hold inside a run:
 * journal entries and bytes, output bytes, timers. Counted here, where the journal is appended,
 * from the entries themselves: nothing the script does inside the sandbox can change the count.
 */
export class RunUsage {
  entries = 0;
  bytes = 0;
  outputBytes = 0;
  timers = 0;

  static of(journal: readonly JournalEntry[]): RunUsage {
    const usage = new RunUsage();
    usage.add(journal);
    return usage;
  }

  add(entries: readonly JournalEntry[]): void {
    for (const entry of entries) {
      this.entries++;
      this.bytes += entryBytes(entry);
      if (entry.kind === "output") this.outputBytes += utf8Length(entry.text);
      else if (entry.kind === "timer.set") this.timers++;
    }
  }

  /** This usage with `entries` counted too, as a new one: what the run holds once they commit. */
  with(entries: readonly JournalEntry[]): RunUsage {
    const after = new RunUsage();
    Object.assign(after, this);
    after.add(entries);
    return after;
  }

  /** The limit this usage is past, as the error that fails the run, or undefined within them. */
  exceeded(limits: Limits, namespace: string): { name: LimitName; error: RewindError } | undefined {
    const over = (name: LimitName, used: number, what: string) =>
      used > limits[name]
        ? {
            name,
            error: limitExceeded(
              name,
              limits[name],
              namespace,
              `this run reached ${used} ${what}`,
              { used },
            ),
          }
        : undefined;
    return (
      over("journalEntries", this.entries, "entries") ??
      over("journalBytes", this.bytes, "bytes of journal") ??
      over("outputBytes", this.outputBytes, "bytes of output") ??
      over("timers", this.timers, "timers")
    );
  }
}

/** An entry's size as the journal file holds it (values inline): its JSON in UTF-8. */
function entryBytes(entry: JournalEntry): number {
  return utf8Length(JSON.stringify(entry));
}

const LIMITS_CACHE_MS = 5_000;

/** The limits of each namespace, its own over this process's defaults, read at most every 5 s. */
export class NamespaceLimitsCache {
  private readonly known = new Map<string, { limits: Limits; until: number }>();

  constructor(
    private readonly store: Store,
    private readonly defaults: Limits,
  ) {}

  forget(namespace: string): void {
    this.known.delete(namespace);
  }

  async of(namespace: string): Promise<Limits> {
    const hit = this.known.get(namespace);
    if (hit !== undefined && hit.until > Date.now()) return hit.limits;
    const limits = effectiveLimits(this.defaults, await this.store.getLimits(namespace));
    if (this.known.size >= 1000) this.known.clear();
    this.known.set(namespace, { limits, until: Date.now() + LIMITS_CACHE_MS });
    return limits;
  }
}
