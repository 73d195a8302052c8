/**
 * The fork preview knows which tools are unsafe to repeat, because `rewind dev` (like every
 * worker) publishes its toolsets at start-up; and what it predicts is what the fork then does.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { defineToolset, type CallEntry } from "@rewind/core";
import { compileScript } from "@rewind/sandbox";
import { Rewind } from "@rewind/sdk";
import { startDevPlatform, type DevPlatform } from "../src/index.js";

let emails = 0;
let deliver: (() => void) | undefined;
const toolset = defineToolset("mail", {
  charge: async (args: { order: string }) => ({ id: `ch_${args.order}` }),
  sendEmail: {
    // The first e-mail hangs (a slow mail server) until the test lets it go.
    run: async () => {
      if (++emails === 1) await new Promise<void>((resolve) => (deliver = resolve));
      return { sent: true };
    },
    unsafeToRepeat: true,
    timeout: "5m",
  },
});
const SCRIPT = `import { tools } from "rewind";
export default async function main(input: { order: string }) {
  const charge = await tools.charge({ order: input.order });
  await tools.sendEmail({ to: "ada@example.com", subject: "Receipt " + charge.id });
  return charge.id;
}`;

let dir: string;
let platform: DevPlatform;
let api: Rewind;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "rewind-fork-unsafe-"));
  platform = await startDevPlatform({ port: 0, dataDir: dir, toolsets: [toolset] });
  api = new Rewind({ url: platform.url, token: platform.token });
}, 60_000);
afterAll(async () => {
  deliver?.();
  await platform?.close();
  rmSync(dir, { recursive: true, force: true });
});

it("rewind dev publishes its toolsets: names and options, no code", async () => {
  expect(await platform.store.getToolset("mail")).toMatchObject({
    tools: [
      { name: "charge", unsafeToRepeat: false, retries: 0 },
      { name: "sendEmail", unsafeToRepeat: true, timeoutMs: 300_000, retries: 0 },
    ],
    publishedBy: `dev:${process.pid}`,
  });
});

it("previews that a fork reusing an e-mail in flight fails with UNSAFE_TO_REPEAT, and it does", async () => {
  const script = await compileScript({ source: SCRIPT, filename: "order.ts" });
  const { id } = await api.runs.start({ script, input: { order: "A1" }, toolset: "mail" });
  let email: CallEntry | undefined;
  for (const deadline = Date.now() + 20_000; email === undefined || emails === 0;) {
    if (Date.now() > deadline) throw new Error("the e-mail was never sent");
    await new Promise((resolve) => setTimeout(resolve, 20));
    const { entries } = await api.runs.journal(id);
    email = entries.find((e): e is CallEntry => e.kind === "call" && e.name === "sendEmail");
  }

  const dry = await api.runs.fork(id, { script, dryRun: true });
  expect(dry.preview).toMatchObject({
    toolsetKnown: true,
    runAgain: [{ seq: email.seq, name: "sendEmail", callId: email.callId }],
    unsafe: [{ seq: email.seq, name: "sendEmail" }],
    failure: { code: "UNSAFE_TO_REPEAT" },
  });
  expect(dry.preview.unsafe[0]!.message).toContain("the fork would fail with UNSAFE_TO_REPEAT");

  const fork = await api.runs.fork(id, { script });
  const outcome = await api.runs.result(fork.id, "20s");
  expect(outcome).toMatchObject({ status: "failed", error: { code: "UNSAFE_TO_REPEAT" } });
  expect(outcome.error!.message).toBe(fork.preview.failure!.message);
  expect(emails).toBe(1); // the fork never sent it again

  // Forking at the e-mail's seq sends it again, on purpose: no failure, a warning.
  const again = await api.runs.fork(id, { script, at: email.seq, dryRun: true });
  expect(again.preview.failure).toBeUndefined();
  expect(again.preview).toMatchObject({
    runAgain: [],
    unsafe: [{ seq: email.seq, message: expect.stringContaining("may happen twice") }],
  });

  deliver!();
  expect(await api.runs.result(id, "20s")).toMatchObject({ status: "completed", result: "ch_A1" });
});
