/**
 * Math.E across the flags of a Node 20 process. Epoch 1 was recorded where scripts read it as
 * undefined (isolated-vm's contexts without --no-node-snapshot); the standard runtime defines it.
 * A process started with --no-node-snapshot gives every context Math.E, non-configurable, so it
 * cannot keep epoch 1's behaviour: it refuses epoch 1 (a worker and the local replay tools say
 * why), and serves epoch 2, which computes the same with or without the flag.
 */
import { describe, expect, it } from "vitest";
import { inChild, sandboxFile } from "./in-child.js";
import { NODE_MAJOR, STANDARD_EPOCH } from "./sandbox-probe.js";

const body = `
  const { probe } = await import(${sandboxFile("test/sandbox-probe.ts")});
  const { Sandbox } = await import(${sandboxFile("src/host.ts")});
  const { epochSupport } = await import(${sandboxFile("src/epochs.ts")});
  const { replayRuntimeProblem } = await import(${sandboxFile("src/replay-runtime.ts")});
  const sandbox = new Sandbox();
  const support = epochSupport({ claims: [1, ${STANDARD_EPOCH}] });
  out.value = {
    epochs: support.epochs,
    refused: support.refused.map((r) => r.epoch + ": " + r.reason),
    replay: replayRuntimeProblem(1, "rewind replay") ?? null,
    standard: await probe(sandbox, ${STANDARD_EPOCH}, "Math.E"),
  };
  sandbox.dispose();`;

describe.skipIf(NODE_MAJOR >= 24)("Math.E and epoch 1 on Node 20", () => {
  it("a process without --no-node-snapshot serves epoch 1 and the standard epoch", () => {
    expect(inChild(body, { env: { TZ: "UTC" } })).toEqual({
      epochs: [1, STANDARD_EPOCH],
      refused: [],
      replay: null,
      standard: Math.E,
    });
  });

  it("a process with --no-node-snapshot refuses epoch 1, saying why, and serves the standard one", () => {
    expect(inChild(body, { env: { TZ: "UTC" }, nodeFlags: ["--no-node-snapshot"] })).toEqual({
      epochs: [STANDARD_EPOCH],
      refused: [
        expect.stringMatching(/^1: epoch 1's scripts read Math.E as undefined.*--no-node-snapshot/),
      ],
      replay: expect.stringMatching(/This journal is epoch 1: .*Math.E/),
      standard: Math.E,
    });
  });
});
