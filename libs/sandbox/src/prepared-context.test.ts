/**
 * A context made ahead of its run (Sandbox.prepare, what a sandbox process does while its worker
 * commits) must be indistinguishable from one made at the run's start: the same commands for the
 * same seed and time, and never shared: what one run leaves in its globals no other run sees.
 */
import { afterAll, expect, it } from "vitest";
import { compileScript } from "./compiler.js";
import { Sandbox } from "./host.js";

const SEED = "ab".repeat(32);
const START = Date.UTC(2025, 5, 1);
const sandbox = new Sandbox({ mode: "sync" });
afterAll(() => sandbox.dispose());

const SOURCE = `import { tools } from "rewind";
export default async function main(input: { tag: string }) {
  const g = globalThis as { left?: string };
  const before = g.left ?? null;
  g.left = input.tag;
  const got = await tools.echo({ r: Math.random(), now: Date.now(), id: crypto.randomUUID() });
  return { before, got };
}`;

async function runOnce(tag: string, prepared: boolean) {
  const script = await compileScript({ source: SOURCE, filename: "prepared.ts" });
  if (prepared) sandbox.prepare();
  const run = await sandbox.instantiate(script, { seed: SEED, startAt: START });
  const first = await run.start({ tag });
  const call = first[0] as { type: "call"; id: number; args: unknown };
  const last = await run.deliver({ type: "call.result", id: call.id, at: START + 5, result: 1 });
  run.dispose();
  return { first, last };
}

it("a prepared context runs a script exactly as a fresh one does", async () => {
  const fresh = await runOnce("a", false);
  const prepared = await runOnce("a", true);
  expect(prepared).toEqual(fresh);
  expect(fresh.first[0]).toMatchObject({ type: "call", name: "echo" });
});

it("each prepared context is one run's only: no global left by one reaches the next", async () => {
  for (let i = 0; i < 3; i++) {
    const { last } = await runOnce(`run-${i}`, true);
    expect(last).toEqual([{ type: "complete", result: { before: null, got: 1 } }]);
  }
  // Prepared twice before a run: still one context for it, the other kept for the next.
  sandbox.prepare();
  sandbox.prepare();
  expect((await runOnce("x", false)).last).toEqual([
    { type: "complete", result: { before: null, got: 1 } },
  ]);
});
