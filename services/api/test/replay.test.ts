import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCRIPT, appendAsExecutor, openHarness, startRun, type Harness } from "./harness.js";

/** The same program written differently: compatible with every journal of SCRIPT. */
const REFACTOR = {
  entry: "refactor.ts",
  code: "const greet = (n) => 'hello ' + n; __rewind_register(async ({ name }) => greet(name));",
  sourceMap: '{"version":3,"sources":["refactor.ts"],"mappings":""}',
};
const CHANGED = { ...REFACTOR, entry: "changed.ts", code: REFACTOR.code.replace("hello", "bye") };

let h: Harness;
/** The journal SCRIPT writes: run.started, then run.completed with its result. */
const complete = (runId: string, result: string) =>
  appendAsExecutor(
    h.store,
    runId,
    (seq) => [{ seq, kind: "run.completed", at: 1, result }],
    "completed",
  );
let done: string;
let queued: string;
let odd: string;
let foreign: string;
/** A run that failed where SCRIPT (and REFACTOR) complete: what a corrected script fixes. */
let failed: string;
beforeAll(async () => {
  h = await openHarness();
  done = await startRun(h);
  await complete(done, "hello Ada");
  queued = await startRun(h); // only run.started: it matches as far as it went
  odd = await startRun(h);
  await complete(odd, "hello Bob");
  const other = await h.app.inject({
    method: "POST",
    url: "/v1/runs",
    headers: h.otherAuth,
    payload: { script: SCRIPT, input: { name: "Eve" } },
  });
  foreign = other.json().id;
  failed = await startRun(h);
  await appendAsExecutor(
    h.store,
    failed,
    (seq) => [
      {
        seq,
        kind: "run.failed",
        at: 1,
        error: { name: "Error", message: "the old bug", code: "SCRIPT_ERROR" },
      },
    ],
    "failed",
  );
}, 60_000);
afterAll(() => h?.close());

const replay = (payload: unknown, headers: Record<string, string> = h.auth) =>
  h.app.inject({ method: "POST", url: "/v1/replay", headers, payload: payload as object });

describe("POST /v1/replay", () => {
  it("checks many runs in one request, one row per id in order; missing runs get their own row", async () => {
    const response = await replay({
      runs: [done, "run_missing", queued, odd, foreign],
    });
    expect(response.statusCode).toBe(200);
    const { checks } = response.json();
    expect(checks).toHaveLength(5);
    expect(checks[0]).toEqual({ runId: done, matches: true, verdict: "matches", entries: 2 });
    expect(checks[1]).toMatchObject({
      runId: "run_missing",
      matches: false,
      error: { code: "NOT_FOUND" },
    });
    expect(checks[1].verdict).toBeUndefined();
    expect(checks[2]).toEqual({ runId: queued, matches: true, verdict: "matches", entries: 1 });
    // Recorded "hello Bob" for input Ada: the run's own script now completes differently.
    expect(checks[3]).toMatchObject({
      runId: odd,
      matches: false,
      verdict: "incompatible",
      divergence: { seq: 2 },
    });
    expect(checks[3].message).toContain("diverges from its journal at seq 2");
    // Another namespace's run is not found, never replayed.
    expect(checks[4]).toMatchObject({ runId: foreign, error: { code: "NOT_FOUND" } });
  });

  it("checks a corrected script against each journal, as the per-run check does", async () => {
    const compatible = await replay({ runs: [done, queued], script: REFACTOR });
    expect(compatible.json().checks.map((c: { matches: boolean }) => c.matches)).toEqual([
      true,
      true,
    ]);
    const changed = (await replay({ runs: [done, queued], script: CHANGED })).json().checks;
    const single = await h.app.inject({
      method: "POST",
      url: `/v1/runs/${done}/replay`,
      headers: h.auth,
      payload: { script: CHANGED },
    });
    expect(changed[0]).toEqual({ runId: done, ...single.json() });
    expect(changed[0]).toMatchObject({
      matches: false,
      divergence: { seq: 2, recorded: { label: 'run.completed with "hello Ada"' } },
    });
    expect(changed[1]).toEqual({ runId: queued, matches: true, verdict: "matches", entries: 1 });
  });

  it("tells a script that fixes a failed run (safe to fork) from one that diverges", async () => {
    const [fixes] = (await replay({ runs: [failed], script: REFACTOR })).json().checks;
    // It completes where the run failed: a fork reuses everything before the failure.
    expect(fixes).toMatchObject({ runId: failed, matches: false, verdict: "fixes-failure" });
    expect(fixes.divergence).toMatchObject({ seq: 2 });
    const single = await h.app.inject({
      method: "POST",
      url: `/v1/runs/${failed}/replay`,
      headers: h.auth,
      payload: { script: REFACTOR },
    });
    expect(single.json()).toMatchObject({ matches: false, verdict: "fixes-failure" });
    // A run that did not fail cannot be fixed: a divergence there is incompatible.
    const [odds] = (await replay({ runs: [odd], script: REFACTOR })).json().checks;
    expect(odds).toMatchObject({ matches: false, verdict: "incompatible" });
  });

  it("survives a corrected script that aborts the process re-executing it", async () => {
    // One allocation far over the sandbox's memory limit: V8 aborts the process it runs in.
    const bomb = {
      ...REFACTOR,
      entry: "bomb.ts",
      code: "__rewind_register(async () => new Array(2 ** 28).fill(1.5).length);",
    };
    const response = await h.app.inject({
      method: "POST",
      url: `/v1/runs/${done}/replay`,
      headers: h.auth,
      payload: { script: bomb },
    });
    expect(response.statusCode).toBe(500);
    expect(response.json().error).toMatchObject({
      code: "SANDBOX_ERROR",
      message: expect.stringContaining("memory limit"),
    });
    // The API is still here, and checks go on in a new child.
    expect((await replay({ runs: [done], script: REFACTOR })).json().checks[0]).toMatchObject({
      matches: true,
    });
  }, 60_000);

  it("refuses a batch that is empty, too large, unauthenticated or malformed", async () => {
    expect((await replay({ runs: [] })).json().error.message).toContain("at least one run id");
    const tooMany = await replay({ runs: Array.from({ length: 201 }, (_, i) => `run_${i}`) });
    expect(tooMany.statusCode).toBe(422);
    expect(tooMany.json().error.message).toContain("at most 200 run ids: send several batches");
    expect((await replay({ runs: [done] }, {})).statusCode).toBe(401);
    const bad = await replay({ runs: [done], scripts: SCRIPT });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().error.code).toBe("INVALID_INPUT");
  });
});
