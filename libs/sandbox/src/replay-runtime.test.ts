import { describe, expect, it } from "vitest";
import { findEpoch } from "./epochs.js";
import { assertReplayableHere, replayRuntimeProblem } from "./replay-runtime.js";

const node20 = findEpoch(1)!.environment;
const node26 = findEpoch(4)!.environment;

describe("replaying a journal on this runtime", () => {
  it("is fine on the epoch's own runtime", () => {
    expect(replayRuntimeProblem(1, "rewind replay", node20)).toBeUndefined();
    expect(replayRuntimeProblem(4, "rewind replay", node26)).toBeUndefined();
  });

  it("on another runtime, names the epoch, both runtimes and what to run", () => {
    const problem = replayRuntimeProblem(1, "rewind replay", node26)!;
    expect(problem).toContain("This journal is epoch 1, replayed by Node 20 (V8 11.3.244.8");
    expect(problem).toContain("which replays epoch 4");
    expect(problem).toContain("run `rewind replay` with Node 20");
  });

  it("on an epoch this build does not know, says to use a newer Rewind", () => {
    expect(replayRuntimeProblem(99, "rewind replay", node20)).toMatch(
      /epoch 99, which this build of Rewind does not know/,
    );
  });

  it("throws CONFLICT from a journal's run.started, and leaves malformed journals to the replay", () => {
    const started = { seq: 1, at: 0, kind: "run.started", epoch: 99 } as never;
    expect(() => assertReplayableHere([started], "rewind replay")).toThrow(
      expect.objectContaining({ code: "CONFLICT" }),
    );
    expect(() => assertReplayableHere([], "rewind replay")).not.toThrow();
  });
});
