import type { CallEntry, JournalEntry, RunStartedEntry } from "@rewind/core";
import { RunEngine, labelEntry, type EntryLabel } from "@rewind/journal";
import type { CompiledScript, Sandbox } from "@rewind/sandbox";

export interface ForkPreview {
  /** Entries of the parent (after run.started) the fork reuses. */
  reused: number;
  /** The first entry that will run live, if the script gets that far before waiting. */
  firstLive?: EntryLabel & { seq: number };
  /** Reused calls with no outcome in the reused part: they run again, with their callId. */
  runAgain: { seq: number; name: string; callId: string; callsite?: string }[];
}

/**
 * What a fork will do, computed as its worker will compute it (the same replay, calling nothing):
 * how much of the parent it reuses, the first thing that runs live, and the calls that will run
 * again because their outcome is not in the reused part. Deterministic, so it holds when the fork runs.
 */
export async function previewFork(
  sandbox: Sandbox,
  script: CompiledScript,
  started: RunStartedEntry,
  parent: readonly JournalEntry[],
  at?: number,
): Promise<ForkPreview> {
  const instance = await sandbox.instantiate(script, { seed: started.seed, startAt: started.at });
  try {
    const forked = await RunEngine.fork(instance, started, parent, at === undefined ? {} : { at });
    const boundary = forked.reused + 1;
    const reusedEntries = forked.entries.filter((e) => e.seq <= boundary);
    const answered = new Set(
      reusedEntries.flatMap((e) =>
        e.kind === "call.result" || e.kind === "call.error" ? [e.callSeq] : [],
      ),
    );
    const runAgain = reusedEntries
      .filter((e): e is CallEntry => e.kind === "call" && !answered.has(e.seq))
      .map((c) => ({
        seq: c.seq,
        name: c.name,
        callId: c.callId,
        ...(c.callsite ? { callsite: c.callsite } : {}),
      }));
    const live = forked.entries.find((e) => e.seq > boundary);
    return {
      reused: forked.reused,
      ...(live ? { firstLive: { ...labelEntry(live, started.at), seq: live.seq } } : {}),
      runAgain,
    };
  } finally {
    instance.dispose();
  }
}
