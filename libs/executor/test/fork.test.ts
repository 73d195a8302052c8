import { afterAll, describe, expect, it } from "vitest";
import {
  defineToolset,
  type CallEntry,
  type RunStartedEntry,
  type ToolContext,
} from "@rewind/core";
import { runInProcess } from "@rewind/executor";
import { Sandbox, compileScript } from "@rewind/sandbox";

const sandbox = new Sandbox();
afterAll(() => sandbox.dispose());

/** Ten steps; the buggy script reads a field the 6th result does not have and fails at step 7. */
const script = (bug: boolean) => `import { tools } from "rewind";
export default async function main() {
  const totals: number[] = [];
  for (let step = 1; step <= 10; step++) {
    const priced = await tools.price({ step, previous: totals.at(-1) ?? 0 });
    totals.push(${bug ? "step === 7 ? (priced as any).missing.cents : priced.cents" : "priced.cents"});
  }
  return totals.reduce((a, b) => a + b, 0);
}`;

function countingTools() {
  const calls: { step: number; callId: string }[] = [];
  const toolset = defineToolset("shop", {
    price: async (args: { step: number }, ctx: ToolContext) => {
      calls.push({ step: args.step, callId: ctx.callId });
      return { cents: args.step * 100 };
    },
  });
  return { calls, toolset };
}

describe("forks", () => {
  it("fixes step 7 of a failed run without making calls 1 to 6 again", async () => {
    const { calls, toolset } = countingTools();
    const parent = await runInProcess({
      script: await compileScript({ source: script(true), filename: "prices.ts" }),
      sandbox,
      toolset,
      seed: "ab".repeat(32),
    });
    expect(parent.status).toBe("failed");
    expect(parent.error?.message).toContain("Cannot read properties of undefined");
    expect(calls.map((c) => c.step)).toEqual([1, 2, 3, 4, 5, 6, 7]);

    calls.length = 0;
    const fork = await runInProcess({
      script: await compileScript({ source: script(false), filename: "prices-fixed.ts" }),
      sandbox,
      toolset,
      fork: { parent: parent.journal },
    });
    expect(fork.status).toBe("completed");
    expect(fork.result).toBe(5500);
    // Calls 1–7 and their results are reused (call 7's result included): only 8 onward run live.
    expect(calls.map((c) => c.step)).toEqual([8, 9, 10]);
    expect(fork.reused).toBe(14);
    const forkCalls = fork.journal.filter((e): e is CallEntry => e.kind === "call");
    const parentCalls = parent.journal.filter((e): e is CallEntry => e.kind === "call");
    // A reused call keeps its parent's callId; a live one gets the fork's own.
    expect(forkCalls.slice(0, 7).map((c) => c.callId)).toEqual(parentCalls.map((c) => c.callId));
    const forkId = (fork.journal[0] as RunStartedEntry).runId;
    expect(forkCalls[7]!.callId).toBe(`${forkId}/${forkCalls[7]!.seq}`);
    expect(fork.journal[0]).toMatchObject({
      kind: "run.started",
      parent: { runId: (parent.journal[0] as { runId: string }).runId },
    });
  });

  it("goes live at the first call that differs, and at --at when asked", async () => {
    const { calls, toolset } = countingTools();
    const parent = await runInProcess({
      script: await compileScript({ source: script(false), filename: "prices.ts" }),
      sandbox,
      toolset,
      seed: "cd".repeat(32),
    });
    calls.length = 0;
    const changed = script(false).replace(
      "{ step, previous: totals.at(-1) ?? 0 }",
      "{ step, previous: step >= 4 ? -1 : (totals.at(-1) ?? 0) }",
    );
    const fork = await runInProcess({
      script: await compileScript({ source: changed, filename: "prices-changed.ts" }),
      sandbox,
      toolset,
      fork: { parent: parent.journal },
    });
    expect(fork.status).toBe("completed");
    expect(calls.map((c) => c.step)).toEqual([4, 5, 6, 7, 8, 9, 10]);
    expect(fork.reused).toBe(6);

    calls.length = 0;
    const atFive = await runInProcess({
      script: await compileScript({ source: script(false), filename: "prices.ts" }),
      sandbox,
      toolset,
      fork: { parent: parent.journal, at: 6 }, // seq 6 is step 3's call: from there on, live
    });
    expect(atFive.status).toBe("completed");
    expect(calls.map((c) => c.step)).toEqual([3, 4, 5, 6, 7, 8, 9, 10]);
    expect(atFive.journal[0]).toMatchObject({ parent: { seq: 6 } });
  });
});
