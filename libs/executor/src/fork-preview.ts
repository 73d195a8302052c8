import type { CallEntry, JournalEntry, RunStartedEntry } from "@rewind/core";
import { RunEngine, labelEntry, type EntryLabel } from "@rewind/journal";
import type { CompiledScript, Sandbox } from "@rewind/sandbox";
import { unsafeToRepeat } from "./verdicts.js";

export interface ForkPreview {
  /** Entries of the parent (after run.started) the fork reuses. */
  reused: number;
  /** The first entry that will run live, if the script gets that far before waiting. */
  firstLive?: EntryLabel & { seq: number };
  /** Reused calls with no outcome in the reused part: they run again, with their callId. */
  runAgain: { seq: number; name: string; callId: string; callsite?: string }[];
  /**
   * Calls of tools marked unsafeToRepeat that the fork would make again: one in flight in the
   * parent (the fork then fails at once, see `failure`), or the first live call when the parent
   * already made that tool's call there and it may have taken effect.
   */
  unsafe: { seq: number; name: string; callsite?: string; message: string }[];
  /** The fork would fail with this before calling anything (a reused call unsafe to repeat). */
  failure?: { code: "UNSAFE_TO_REPEAT"; message: string };
  /** False when no worker has published the run's toolset: unsafe tools could not be named. */
  toolsetKnown: boolean;
  /**
   * The parent was cancelled here. A fork does not inherit the cancel (it is a new run, started
   * to carry on with a fix), so it runs on live past it: said, so that nobody is surprised.
   */
  parentCancelled?: { seq: number; reason?: string };
}

/**
 * What a fork will do, computed as its worker will compute it (the same replay, calling nothing):
 * how much of the parent it reuses, the first thing that runs live, and the calls that will run
 * again because their outcome is not in the reused part. Deterministic, so it holds when the fork
 * runs. `unsafeTools` names the toolset's tools marked unsafeToRepeat, as the workers published
 * them (undefined: the toolset is not known here).
 */
export async function previewFork(
  sandbox: Sandbox,
  script: CompiledScript,
  started: RunStartedEntry,
  parent: readonly JournalEntry[],
  at?: number,
  unsafeTools?: readonly string[],
): Promise<ForkPreview> {
  const instance = await sandbox.instantiate(script, {
    seed: started.seed,
    startAt: started.at,
    epoch: started.epoch,
  });
  try {
    const forked = await RunEngine.fork(instance, started, parent, at === undefined ? {} : { at });
    const boundary = forked.reused + 1;
    const reusedEntries = forked.entries.filter((e) => e.seq <= boundary);
    const answered = new Set(
      reusedEntries.flatMap((e) =>
        e.kind === "call.result" || e.kind === "call.error" ? [e.callSeq] : [],
      ),
    );
    const inFlight = reusedEntries.filter(
      (e): e is CallEntry => e.kind === "call" && !answered.has(e.seq),
    );
    const live = forked.entries.find((e) => e.seq > boundary);
    const unsafe = unsafeCalls(started, parent, inFlight, live, new Set(unsafeTools ?? []));
    const failing = unsafe.find((u) => u.verdict !== undefined);
    return {
      reused: forked.reused,
      ...(live ? { firstLive: { ...labelEntry(live, started.at), seq: live.seq } } : {}),
      runAgain: inFlight.map((c) => ({
        seq: c.seq,
        name: c.name,
        callId: c.callId,
        ...(c.callsite ? { callsite: c.callsite } : {}),
      })),
      unsafe: unsafe.map(({ verdict: _, ...call }) => call),
      ...(failing?.verdict
        ? { failure: { code: "UNSAFE_TO_REPEAT", message: failing.verdict } }
        : {}),
      toolsetKnown: unsafeTools !== undefined,
      ...cancelOf(parent),
    };
  } finally {
    instance.dispose();
  }
}

/** An unsafe call, with the verdict the worker would fail the fork with (for one in flight). */
type UnsafeCall = ForkPreview["unsafe"][number] & { verdict?: string };

/**
 * The calls to unsafe tools that would happen again. A reused call in flight is re-invoked with
 * its callId, which the worker refuses for such a tool: the fork fails (the same verdict and
 * message as the worker's). The first live call is a new call (a new callId), but when the parent
 * made a call to the same tool from that point on that succeeded or may have (no outcome), its
 * effect happens twice: said here so that nobody learns it from the outside world.
 */
function unsafeCalls(
  started: RunStartedEntry,
  parent: readonly JournalEntry[],
  inFlight: readonly CallEntry[],
  live: JournalEntry | undefined,
  unsafe: ReadonlySet<string>,
): UnsafeCall[] {
  const found: UnsafeCall[] = [];
  const at = (c: CallEntry) => (c.callsite ? { callsite: c.callsite } : {});
  for (const call of inFlight.filter((c) => unsafe.has(c.name))) {
    found.push({
      seq: call.seq,
      name: call.name,
      ...at(call),
      message:
        `tools.${call.name}() at seq ${call.seq} (callId ${call.callId}) was in flight in the parent, and ` +
        `${started.toolset}.${call.name} is marked unsafeToRepeat: the fork would fail with UNSAFE_TO_REPEAT ` +
        `without calling it. Check whether it took effect; to make the call again, fork with at ${call.seq} ` +
        `(it then runs live, with a new callId)`,
      verdict: unsafeToRepeat(call, started.toolset).message,
    });
  }
  if (live?.kind === "call" && unsafe.has(live.name)) {
    const failed = new Set(parent.flatMap((e) => (e.kind === "call.error" ? [e.callSeq] : [])));
    const before = parent.find(
      (e): e is CallEntry =>
        e.kind === "call" && e.seq >= live.seq && e.name === live.name && !failed.has(e.seq),
    );
    if (before !== undefined)
      found.push({
        seq: live.seq,
        name: live.name,
        ...at(live),
        message:
          `The fork calls tools.${live.name}() live at seq ${live.seq}, and ${started.toolset}.${live.name} ` +
          `is marked unsafeToRepeat: its parent already called it at seq ${before.seq} ` +
          `(callId ${before.callId}), so its effect may happen twice`,
      });
  }
  return found;
}

function cancelOf(parent: readonly JournalEntry[]): Pick<ForkPreview, "parentCancelled"> {
  const cancel = parent.find((e) => e.kind === "run.cancelled");
  if (cancel === undefined) return {};
  return {
    parentCancelled: {
      seq: cancel.seq,
      ...(cancel.reason !== undefined ? { reason: cancel.reason } : {}),
    },
  };
}
