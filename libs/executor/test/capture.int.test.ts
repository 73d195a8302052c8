/**
 * The capture policy at the executor's commit seam (docs/capture-policy.md), over Postgres: a
 * policy set while a run is hot applies to the entries committed after it, never to those
 * recorded before; the hot script goes on with the real values; a hostile pattern fails closed.
 */
import { afterAll, expect, it } from "vitest";
import { defineToolset, type JournalEntry } from "@rewind/core";
import { Sandbox, compileScript } from "@rewind/sandbox";
import type { Store } from "@rewind/store";
import { Executor, PATTERN_TIMEOUT_RULE } from "../src/index.js";
import { createRun, until, useTestStore } from "./harness.js";

let store: Store;
useTestStore("capture", (made) => (store = made));
const sandbox = new Sandbox({ mode: "async" });
afterAll(() => sandbox.dispose());

const CARD = "4242 4242 4242 4242";
const toolset = defineToolset("cards", {
  card: async () => ({ number: CARD }),
  echo: async (args: { text: string }) => ({ text: args.text }),
});
const none = { fields: [], detectors: [], patterns: [] };
const executor = (owner: string) =>
  new Executor({ store, sandbox, toolsets: new Map([["cards", toolset]]), owner });

it("applies a policy set while the run is hot to new entries only; the script keeps the real values", async () => {
  const script = await compileScript({
    filename: "cards.ts",
    source: `import { tools, waitForSignal } from "rewind";
export default async function main() {
  const a = await tools.card({});
  await waitForSignal("go");
  const b = await tools.card({});
  return { first: a.number.length, last4: b.number.slice(-4), same: a.number === b.number };
}`,
  });
  const runId = await createRun(store, script, { toolset: "cards" });
  const worker = executor("w-capture");
  await worker.activate(runId);
  await until(async () => (await store.getRun(runId))?.status === "waiting");
  await store.setCapturePolicy("default", "cards", { ...none, detectors: ["card-number"] });
  await store.addInbox(runId, { kind: "signal", name: "go", payload: null });
  await worker.activate(runId);
  await until(async () => (await store.getRun(runId))?.status === "completed");
  await worker.close();

  const journal = await store.readJournal(runId);
  const results = journal.filter((e) => e.kind === "call.result");
  // Recorded before the policy: as it was. After: redacted, and marked.
  expect(results[0]).toMatchObject({ result: { number: CARD } });
  expect(results[0]).not.toHaveProperty("redacted");
  expect(results[1]).toMatchObject({
    result: { number: "[redacted:card-number]" },
    redacted: ["card-number"],
  });
  // The hot script compared the two real numbers.
  expect((await store.getRun(runId))?.result).toEqual({
    first: CARD.length,
    last4: "4242",
    same: true,
  });
  expect(await store.firstRedacted(runId)).toEqual({
    seq: results[1]!.seq,
    rules: ["card-number"],
  });
  await store.setCapturePolicy("default", "cards", none);
});

it("fails closed when an operator's pattern runs out of time, and the run carries on", async () => {
  await store.setCapturePolicy("default", null, {
    ...none,
    patterns: [{ name: "evil", regex: "(a+)+$" }],
  });
  const script = await compileScript({
    filename: "echo.ts",
    source: `import { tools } from "rewind";
export default async function main() {
  const r = await tools.echo({ text: "a".repeat(40) + "b" });
  return { length: r.text.length };
}`,
  });
  const runId = await createRun(store, script, { toolset: "cards" });
  const worker = executor("w-evil");
  const started = performance.now();
  await worker.activate(runId);
  await until(async () => (await store.getRun(runId))?.status === "completed");
  const seconds = (performance.now() - started) / 1000;
  await worker.close();
  expect(seconds).toBeLessThan(5);
  const call = (await store.readJournal(runId)).find((e) => e.kind === "call") as JournalEntry;
  expect(call).toMatchObject({
    args: { text: `[redacted:${PATTERN_TIMEOUT_RULE}]` },
    redacted: [PATTERN_TIMEOUT_RULE],
  });
  expect((await store.getRun(runId))?.result).toEqual({ length: 41 });
  await store.setCapturePolicy("default", null, none);
});
