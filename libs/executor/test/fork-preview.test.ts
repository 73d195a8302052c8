import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  defineToolset,
  type CallEntry,
  type JournalEntry,
  type RunStartedEntry,
} from "@rewind/core";
import { describeToolsets, previewFork, runInProcess } from "@rewind/executor";
import { Sandbox, compileScript, type CompiledScript } from "@rewind/sandbox";

const sandbox = new Sandbox();
afterAll(() => sandbox.dispose());

/** Charge, then e-mail the receipt, then log: the e-mail must never go out twice. */
const script = (subject: string) => `import { tools } from "rewind";
export default async function main(input: { order: string }) {
  const charge = await tools.charge({ order: input.order });
  await tools.sendEmail({ to: "ada@example.com", subject: ${JSON.stringify(subject)} + charge.id });
  await tools.charge({ order: input.order + "-tip" });
  return "done";
}`;
const toolset = defineToolset("shop", {
  charge: async (args: { order: string }) => ({ id: `ch_${args.order}` }),
  sendEmail: { run: async () => ({ sent: true }), unsafeToRepeat: true, retries: 2 },
});
const UNSAFE = ["sendEmail"];

let original: CompiledScript;
let completed: JournalEntry[];
beforeAll(async () => {
  original = await compileScript({ source: script("Receipt "), filename: "order.ts" });
  const run = await runInProcess({ script: original, sandbox, toolset, input: { order: "A1" } });
  expect(run.status).toBe("completed");
  completed = run.journal;
});

const forkOf = (parent: readonly JournalEntry[]): RunStartedEntry => ({
  ...(parent[0] as RunStartedEntry),
  runId: "run_fork",
  parent: { runId: (parent[0] as RunStartedEntry).runId, seq: 0 },
});

describe("fork preview: tools unsafe to repeat", () => {
  it("describes toolsets as workers publish them: names and options, no code", () => {
    expect(describeToolsets([toolset])).toEqual([
      {
        name: "shop",
        tools: [
          { name: "charge", unsafeToRepeat: false, retries: 0 },
          { name: "sendEmail", unsafeToRepeat: true, retries: 2 },
        ],
      },
    ]);
  });

  it("says a fork would fail with UNSAFE_TO_REPEAT when it reuses an unsafe call in flight", async () => {
    // The parent stopped while the e-mail was being sent: its call has no outcome.
    const email = completed.find(
      (e): e is CallEntry => e.kind === "call" && e.name === "sendEmail",
    )!;
    const crashed = completed.filter((e) => e.seq <= email.seq);
    const preview = await previewFork(
      sandbox,
      original,
      forkOf(crashed),
      crashed,
      undefined,
      UNSAFE,
    );
    expect(preview.runAgain).toEqual([
      { seq: email.seq, name: "sendEmail", callId: email.callId, callsite: email.callsite },
    ]);
    expect(preview.unsafe).toEqual([
      {
        seq: email.seq,
        name: "sendEmail",
        callsite: expect.stringMatching(/^order\.ts:4:\d+$/),
        message: expect.stringContaining(
          `tools.sendEmail() at seq ${email.seq} (callId ${email.callId}) was in flight in the parent`,
        ),
      },
    ]);
    expect(preview.unsafe[0]!.message).toContain(`fork with at ${email.seq}`);
    expect(preview.failure).toEqual({
      code: "UNSAFE_TO_REPEAT",
      message: expect.stringContaining("shop.sendEmail is marked unsafeToRepeat"),
    });
    expect(preview.toolsetKnown).toBe(true);

    // Without the toolset's description the call still runs again, but cannot be named unsafe.
    const blind = await previewFork(sandbox, original, forkOf(crashed), crashed);
    expect(blind).toMatchObject({
      unsafe: [],
      toolsetKnown: false,
      runAgain: [{ seq: email.seq }],
    });
    expect(blind.failure).toBeUndefined();

    // Forking at the e-mail's seq makes the call again, live, on purpose: no failure, but a warning.
    const again = await previewFork(sandbox, original, forkOf(crashed), crashed, email.seq, UNSAFE);
    expect(again).toMatchObject({ runAgain: [], firstLive: { seq: email.seq } });
    expect(again.failure).toBeUndefined();
    expect(again.unsafe).toEqual([
      expect.objectContaining({
        seq: email.seq,
        message: expect.stringContaining("its effect may happen twice"),
      }),
    ]);
  });

  it("warns when the first live call is to an unsafe tool the parent already called", async () => {
    const fixed = await compileScript({ source: script("Your receipt "), filename: "fixed.ts" });
    const preview = await previewFork(
      sandbox,
      fixed,
      forkOf(completed),
      completed,
      undefined,
      UNSAFE,
    );
    expect(preview).toMatchObject({
      reused: 2,
      firstLive: { seq: 4, label: expect.stringContaining("call sendEmail(") },
      runAgain: [],
    });
    expect(preview.unsafe).toEqual([
      {
        seq: 4,
        name: "sendEmail",
        callsite: expect.stringMatching(/^fixed\.ts:4:\d+$/),
        message: expect.stringMatching(
          /^The fork calls tools\.sendEmail\(\) live at seq 4, and shop\.sendEmail is marked unsafeToRepeat: its parent already called it at seq 4 \(callId run_\w+\/4\)/,
        ),
      },
    ]);
    expect(preview.failure).toBeUndefined();

    // A safe tool, or an e-mail the parent's call failed to send, is nothing to warn about.
    expect(
      (await previewFork(sandbox, fixed, forkOf(completed), completed, undefined, [])).unsafe,
    ).toEqual([]);
    const bounced = completed.map((e) =>
      e.kind === "call.result" && e.callSeq === 4
        ? {
            seq: e.seq,
            kind: "call.error" as const,
            at: e.at,
            callSeq: 4,
            error: { name: "Error", message: "bounced" },
          }
        : e,
    );
    const afterBounce = await previewFork(
      sandbox,
      fixed,
      forkOf(bounced),
      bounced,
      undefined,
      UNSAFE,
    );
    expect(afterBounce).toMatchObject({ firstLive: { seq: 4 }, unsafe: [] });
  });
});
