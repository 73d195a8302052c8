import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { defineToolset, type CallEntry, type ToolContext } from "@rewind/core";
import { compileScript } from "@rewind/sandbox";
import { Rewind } from "@rewind/sdk";
import { startDevPlatform, type DevPlatform } from "../src/index.js";

const calls: { step: number; callId: string }[] = [];
const toolset = defineToolset("prices", {
  price: async (args: { step: number }, ctx: ToolContext) => {
    calls.push({ step: args.step, callId: ctx.callId });
    return { cents: args.step * 100 };
  },
});
const script = (bug: boolean) => `import { tools } from "rewind";
export default async function main() {
  const totals: number[] = [];
  for (let step = 1; step <= 10; step++) {
    const priced = await tools.price({ step });
    totals.push(${bug ? "step === 7 ? (priced as any).missing.cents : priced.cents" : "priced.cents"});
  }
  return totals.reduce((a, b) => a + b, 0);
}`;

let dir: string;
let platform: DevPlatform;
let api: Rewind;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "rewind-fork-"));
  platform = await startDevPlatform({ port: 0, dataDir: dir, toolsets: [toolset] });
  api = new Rewind({ url: platform.url, token: platform.token });
});
afterAll(async () => {
  await platform.close();
  rmSync(dir, { recursive: true, force: true });
});

it("forks a run failed at its 7th call: calls 1–6 are not made again, 7 onward run live", async () => {
  const buggy = await compileScript({ source: script(true), filename: "prices.ts" });
  const { id: parentId } = await api.runs.start({ script: buggy, toolset: "prices" });
  expect(await api.runs.result(parentId, "20s")).toMatchObject({ status: "failed" });
  expect(calls.map((c) => c.step)).toEqual([1, 2, 3, 4, 5, 6, 7]);

  // Before forking, check the fix against the run's history on the server: it diverges exactly
  // where the run failed (the fixed script goes on to call 8 where the old one threw).
  const fixed = await compileScript({ source: script(false), filename: "prices-fixed.ts" });
  expect(await api.runs.replay(parentId)).toMatchObject({ matches: true, entries: 16 });
  const check = await api.runs.replay(parentId, fixed);
  expect(check).toMatchObject({ matches: false, divergence: { seq: 16, matched: 15 } });
  expect(check.message).toContain("call price({ step: 8 })");
  expect(calls).toHaveLength(7); // a replay check calls nothing

  calls.length = 0;
  const fork = await api.runs.fork(parentId, { script: fixed });
  expect(fork.parent).toEqual({ runId: parentId, seq: 0 });
  expect(await api.runs.result(fork.id, "20s")).toMatchObject({
    status: "completed",
    result: 5500,
  });
  expect(calls.map((c) => c.step)).toEqual([8, 9, 10]);

  const journal = (await api.runs.journal(fork.id)).entries;
  const forkCalls = journal.filter((e): e is CallEntry => e.kind === "call");
  expect(forkCalls.slice(0, 7).every((c) => c.callId.startsWith(`${parentId}/`))).toBe(true);
  expect(forkCalls.slice(7).every((c) => c.callId.startsWith(`${fork.id}/`))).toBe(true);
  expect((await api.runs.get(fork.id)).parent).toEqual({ runId: parentId, seq: 0 });
});

it("journals run.completed for a fork whose script ends exactly where its reuse ends", async () => {
  // The parent fails after its tenth call's result; the fix returns at that same point, so the
  // fork reuses the whole parent and its first live entry is its own run.completed.
  const late = (bug: boolean) =>
    script(false).replace(
      "return totals",
      `${bug ? "throw new Error('late');" : ""} return totals`,
    );
  const parent = await compileScript({ source: late(true), filename: "late.ts" });
  const { id: parentId } = await api.runs.start({ script: parent, toolset: "prices" });
  expect(await api.runs.result(parentId, "20s")).toMatchObject({ status: "failed" });

  calls.length = 0;
  const fixed = await compileScript({ source: late(false), filename: "late-fixed.ts" });
  const fork = await api.runs.fork(parentId, { script: fixed });
  expect(await api.runs.result(fork.id, "20s")).toMatchObject({
    status: "completed",
    result: 5500,
  });
  expect(calls).toHaveLength(0); // every call reused
  const journal = (await api.runs.journal(fork.id)).entries;
  expect(journal.at(-1)).toMatchObject({ kind: "run.completed", result: 5500 });
  expect(journal.map((e) => e.seq)).toEqual(journal.map((_, i) => i + 1));
});
