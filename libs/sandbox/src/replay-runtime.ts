import { RewindError, type JournalEntry } from "@rewind/core";
import {
  EPOCHS,
  currentEnvironment,
  engineProblemFor,
  findEpoch,
  runtimeMismatches,
  type EpochEnvironment,
  type EpochRelease,
} from "./epochs.js";

/** The Node release line whose V8 an epoch names, for people (the rows pin the exact V8). */
const NODE_OF_V8: Record<string, string> = {
  "11.3": "Node 20",
  "13.6": "Node 24",
  "14.6": "Node 26",
};

export function nodeOf(release: EpochRelease): string {
  const line = release.environment.v8.split(".").slice(0, 2).join(".");
  return NODE_OF_V8[line] ?? `the Node with V8 ${release.environment.v8}`;
}

/**
 * Why this process cannot replay a journal of `epoch` here (undefined when it can), saying what to
 * run instead. Local tools (`rewind replay`, `exec --resume`, `exec --fork`, `test --cassette`)
 * replay on the CLI's own Node: on another epoch's runtime, a mismatch would be the runtime's, not
 * the script's, so they say so instead of reporting a divergence.
 */
export function replayRuntimeProblem(
  epoch: number,
  tool: string,
  environment: EpochEnvironment = currentEnvironment(),
): string | undefined {
  const release = findEpoch(epoch);
  if (release === undefined)
    return (
      `This journal was recorded in epoch ${epoch}, which this build of Rewind does not know (it knows ` +
      `${EPOCHS.map((e) => e.epoch).join(", ")}): run \`${tool}\` with the Rewind release that made it, or a newer one`
    );
  const mismatches = runtimeMismatches(release, environment);
  if (mismatches.length === 0) {
    const problem = engineProblemFor(epoch);
    return problem === undefined ? undefined : `This journal is epoch ${epoch}: ${problem}.`;
  }
  const here = EPOCHS.filter((e) => runtimeMismatches(e, environment).length === 0).map(
    (e) => e.epoch,
  );
  return (
    `This journal is epoch ${epoch}, replayed by ${nodeOf(release)} (V8 ${release.environment.v8}, ` +
    `isolated-vm ${release.environment.isolatedVm}); this rewind runs on Node ${process.versions.node}, ` +
    `which replays ${here.length === 0 ? "no epoch" : `epoch ${here.join(", ")}`} (${mismatches.join(", ")}). ` +
    `A replay here could differ through no fault of the script: run \`${tool}\` with ${nodeOf(release)} ` +
    `(the epoch's runtime) instead.`
  );
}

/** Throws CONFLICT when `journal` (from its run.started) is another runtime's epoch. */
export function assertReplayableHere(journal: readonly JournalEntry[], tool: string): void {
  const started = journal[0];
  if (started?.kind !== "run.started") return; // the replay itself reports a malformed journal
  const problem = replayRuntimeProblem(started.epoch, tool);
  if (problem !== undefined) throw new RewindError("CONFLICT", problem);
}
