import {
  canonicalize,
  defineToolset,
  shortForm,
  type CallEntry,
  type JournalEntry,
  type Tool,
  type Toolset,
} from "@rewind/core";

/** A call the script made that the cassette does not hold: the test fails with this. */
export class CassetteMissError extends Error {
  override readonly name = "CassetteMissError";
}

interface Recorded {
  call: CallEntry;
  outcome: JournalEntry | undefined;
}

/**
 * The toolset a cassette plays: each call is answered with what the real tool answered to the
 * same call (same tool, same arguments, in the order they were made), after the same virtual
 * delay. A call it does not hold is recorded as a miss, reported with the nearest recorded call.
 */
export class CassettePlayer {
  readonly toolset: Toolset;
  readonly misses: string[] = [];
  private readonly queues = new Map<string, Recorded[]>();
  private readonly recorded: Recorded[] = [];
  /** The virtual time each answered call took when it was recorded, by the new call's callId. */
  private readonly delays = new Map<string, number>();

  constructor(readonly journal: readonly JournalEntry[]) {
    const outcomes = new Map<number, JournalEntry>();
    for (const entry of journal) {
      if (entry.kind === "call.result" || entry.kind === "call.error")
        outcomes.set(entry.callSeq, entry);
    }
    for (const entry of journal) {
      if (entry.kind !== "call") continue;
      const item = { call: entry, outcome: outcomes.get(entry.seq) };
      this.recorded.push(item);
      const key = keyOf(entry.name, entry.args);
      this.queues.set(key, [...(this.queues.get(key) ?? []), item]);
    }
    const answer = (name: string): Tool => ({
      name,
      unsafeToRepeat: false,
      timeoutMs: undefined,
      retries: 0,
      run: async (args: unknown, ctx) => this.answer(name, args, ctx.callId),
    });
    const tools = new Map<string, Tool>();
    // Every name is a tool here: a call of one the cassette never saw is a miss, not TOOL_NOT_FOUND.
    const all = new (class extends Map<string, Tool> {
      override has(): boolean {
        return true;
      }
      override get(name: string): Tool {
        return tools.get(name) ?? answer(name);
      }
    })();
    for (const { call } of this.recorded) tools.set(call.name, answer(call.name));
    this.toolset = { ...defineToolset("cassette", {}), tools: all };
  }

  /** Virtual time a call takes: what the recorded call it was answered with took. */
  latency(call: CallEntry): number {
    return this.delays.get(call.callId) ?? 0;
  }

  private answer(name: string, args: unknown, callId: string): unknown {
    const item = this.queues.get(keyOf(name, args))?.shift();
    if (item === undefined) {
      const miss = `tools.${name}(${shortForm(args)}) is not in the cassette; ${this.nearest(name, args)}`;
      this.misses.push(miss);
      throw new CassetteMissError(miss);
    }
    if (item.outcome !== undefined) this.delays.set(callId, item.outcome.at - item.call.at);
    if (item.outcome?.kind === "call.error") {
      throw Object.assign(new Error(item.outcome.error.message), {
        name: item.outcome.error.name,
        code: item.outcome.error.code,
      });
    }
    if (item.outcome?.kind === "call.result") return item.outcome.result;
    throw new CassetteMissError(
      `tools.${name}(${shortForm(args)}) was still in flight when the cassette was recorded`,
    );
  }

  private nearest(name: string, args: unknown): string {
    const text = canonicalize(args ?? null);
    const candidates = this.recorded.filter((r) => r.call.name === name);
    const pool = candidates.length > 0 ? candidates : this.recorded;
    if (pool.length === 0) return "the cassette holds no call at all";
    // Nearest: the same tool, then the most arguments equal, then the fewest edits apart.
    let best = pool[0]!;
    let bestScore = -Infinity;
    for (const item of pool) {
      const score =
        (item.call.name === name ? 1e9 : 0) +
        sameFields(args, item.call.args) * 1e5 -
        editDistance(text, canonicalize(item.call.args));
      if (score > bestScore) [best, bestScore] = [item, score];
    }
    const where = best.call.callsite ? ` at ${best.call.callsite}` : "";
    return `the nearest recorded call is tools.${best.call.name}(${shortForm(best.call.args)}) at seq ${best.call.seq}${where}`;
  }
}

function keyOf(name: string, args: unknown): string {
  return `${name}\u0000${canonicalize(args ?? null)}`;
}

/** How many top-level fields two argument objects have equal. */
function sameFields(a: unknown, b: unknown): number {
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return 0;
  const other = b as Record<string, unknown>;
  return Object.entries(a).filter(
    ([k, v]) => k in other && canonicalize(v ?? null) === canonicalize(other[k] ?? null),
  ).length;
}

/** Levenshtein distance, on at most 400 characters of each side (enough to rank candidates). */
function editDistance(a: string, b: string): number {
  const x = a.slice(0, 400);
  const y = b.slice(0, 400);
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[y.length]!;
}
