/**
 * A store that goes away for a moment (Postgres stopped, a connection reset) at chosen points of
 * an activation: as an outcome or a due timer is journaled, as a commit's answer comes back, as a
 * rebuilt run is loaded. The activation fails and is retried; a hot copy that may be out of step
 * with its journal must not survive it. Each run then completes with one body per callId and no
 * event delivered twice (services/worker/test/restarts.int.test.ts is the same at the scale of a
 * cluster, by timing).
 */
import { afterAll, expect, it } from "vitest";
import { defineToolset, type JournalEntry, type ToolContext } from "@rewind/core";
import { Executor } from "@rewind/executor";
import { Sandbox, compileScript } from "@rewind/sandbox";
import type { Store } from "@rewind/store";
import { createRun, until, useTestStore } from "./harness.js";

let store: Store;
useTestStore("outage", (made) => (store = made));
const sandbox = new Sandbox({ mode: "async" });
afterAll(() => sandbox.dispose());

const SOURCE = `import { tools, sleep } from "rewind";
export default async () => {
  const a = await tools.charge({ n: 1 });
  await sleep(50);
  const b = await tools.charge({ n: 2 });
  return a.n + b.n;
};`;

const lost = () => new Error("Connection terminated unexpectedly");

/**
 * The store as the executor sees it: while `down`, every call to it fails as node-postgres
 * fails when the server is gone. `onCall` sees each method called, before it answers; when it
 * answers "ambiguous", that call is carried out and then fails all the same (a COMMIT that
 * reached the server, its answer lost as the server stopped).
 */
function flakyStore(onCall: (method: string) => "ambiguous" | undefined) {
  const state = { down: false };
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const ambiguous = onCall(String(key)) === "ambiguous";
        if (state.down && !ambiguous) return Promise.reject(lost());
        const answer = (value as (...a: unknown[]) => unknown).apply(target, args);
        return ambiguous ? Promise.resolve(answer).then(() => Promise.reject(lost())) : answer;
      };
    },
  });
  return { store: proxy, state };
}

/**
 * One run of `source` through an executor whose store goes down once, for 1.5 s, at the `nth`
 * call of `method` (it fails there, or with `ambiguous` is carried out and fails; and so does the
 * first retry a second later).
 */
async function outage(
  name: string,
  source: string,
  at: { method: string; nth: number; ambiguous?: boolean },
  expected: { kinds: string[]; result: number },
) {
  const invocations: { callId: string; body: string }[] = [];
  const toolset = defineToolset("outage", {
    charge: async (args: { n: number }, ctx: ToolContext) => {
      invocations.push({ callId: ctx.callId, body: JSON.stringify(args) });
      return { n: args.n };
    },
  });
  const script = await compileScript({ source, filename: "outage.ts" });
  const runId = await createRun(store, script, { toolset: "outage" });
  let calls = 0;
  let wentDown = false;
  const errors: string[] = [];
  const flaky = flakyStore((method) => {
    if (wentDown || method !== at.method || ++calls !== at.nth) return undefined;
    wentDown = flaky.state.down = true;
    setTimeout(() => (flaky.state.down = false), 1_500).unref();
    return at.ambiguous === true ? "ambiguous" : undefined;
  });
  const exec = new Executor({
    store: flaky.store,
    sandbox,
    toolsets: new Map([["outage", toolset]]),
    owner: `outage-${name}`,
    onError: (_runId, error) => errors.push((error as Error).message),
  });
  try {
    await exec.activate(runId);
    await until(
      async () => (await store.getRun(runId))?.status === "completed",
      10_000,
      `${runId} to complete`,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; errors: ${[...new Set(errors)].join(" | ")}`);
    });
  } finally {
    await exec.close();
  }
  expect(wentDown, "the store went down").toBe(true);
  const journal = await store.readJournal(runId);
  expect((await store.getRun(runId))?.result).toBe(expected.result);
  expect(journal.map((e) => e.kind)).toEqual(expected.kinds);
  for (const call of journal.filter((e): e is JournalEntry & { kind: "call" } => e.kind === "call"))
    expect(
      new Set(invocations.filter((i) => i.callId === call.callId).map((i) => i.body)).size,
    ).toBe(1);
  expect(errors.filter((m) => /awaits an outcome|is pending/.test(m))).toEqual([]);
}

const STEPS = {
  kinds: [
    "run.started",
    "call",
    "call.result",
    "timer.set",
    "timer.fired",
    "call",
    "call.result",
    "run.completed",
  ],
  result: 3,
};

// Each commit reads the capture policy first (its cache may have run out): there the store fails.
// SOURCE's commits: [call], [call.result, timer.set], [timer.fired, call], [call.result, run.completed].

it("goes on when the store fails as a loaded run's first commands are journaled", async () => {
  // The load's own step: a copy that failed there has not yet run its calls or armed its timers.
  await outage("load", SOURCE, { method: "captureRules", nth: 1 }, STEPS);
}, 20_000);

it("goes on when the store fails as a call's outcome is journaled", async () => {
  await outage("outcome", SOURCE, { method: "captureRules", nth: 2 }, STEPS);
}, 20_000);

it("goes on when the store fails as a due timer is journaled", async () => {
  await outage("timer", SOURCE, { method: "captureRules", nth: 3 }, STEPS);
}, 20_000);

it("goes on when a commit went in but its answer was lost", async () => {
  // [call.result, timer.set] is in the journal; the executor heard only an error.
  await outage("ambiguous", SOURCE, { method: "commit", nth: 2, ambiguous: true }, STEPS);
}, 20_000);

it("runs again the calls whose outcomes a failed rebuild lost", async () => {
  // Both outcomes arrive together; the first one's continuation outruns the live slice, so the
  // run is rebuilt from its journal, and the store is down for that load (the second loadRun).
  // The outcomes the dropped copy held are lost with it: their calls must run again.
  const heavy = `import { tools } from "rewind";
  export default async () => {
    const pending = [tools.charge({ n: 1 }), tools.charge({ n: 2 })];
    const a = await pending[0];
    let x = 0;
    for (let i = 0; i < 30_000_000; i++) x = (x * 31 + i) % 1_000_003; // ~200 ms: past a 20 ms slice
    const b = await pending[1];
    return a.n + b.n + (x < 0 ? 1 : 0);
  };`;
  await outage(
    "rebuild",
    heavy,
    { method: "loadRun", nth: 2 },
    {
      kinds: ["run.started", "call", "call", "call.result", "call.result", "run.completed"],
      result: 3,
    },
  );
}, 20_000);
