import type { RunStartedEntry } from "@rewind/core";

/** The first entry of a run the projector tests journal by hand (no script executes it). */
export function startedEntry(runId: string, namespace = "default"): RunStartedEntry {
  return {
    seq: 1,
    kind: "run.started",
    at: 1_000,
    runId,
    scriptHash: "sha256:s",
    input: {},
    seed: "ab".repeat(32),
    epoch: 1,
    toolset: "shop",
    namespace,
  };
}
