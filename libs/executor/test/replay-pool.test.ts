import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineToolset, RewindError, type RunStartedEntry } from "@rewind/core";
import { ReplayPool, checkReplay, previewFork, runInProcess } from "@rewind/executor";
import { Sandbox, compileScript, type CompiledScript } from "@rewind/sandbox";
import { renderMetrics } from "@rewind/telemetry";

const sandbox = new Sandbox();
const pool = new ReplayPool({ threads: 2 });
afterAll(async () => {
  sandbox.dispose();
  await pool.close();
});

/** Twenty calls; with `spin`, each replay also computes for a while (to watch the event loop). */
const script = (args: string, spin = 0) => `import { tools } from "rewind";
export default async function main(input: { n: number }) {
  let x = 0;
  for (let i = 0; i < ${spin}; i++) x = (x * 31 + i) % 1000003;
  let sum = 0;
  for (let i = 0; i < 20; i++) sum += (await tools.step(${args})).v;
  return sum + (x % 1);
}`;
const toolset = defineToolset("bench", {
  step: async (a: { i: number; n: number }) => ({ v: a.i * a.n }),
});

let original: CompiledScript;
let journals: (readonly import("@rewind/core").JournalEntry[])[];
beforeAll(async () => {
  original = await compileScript({ source: script("{ i, n: input.n }"), filename: "steps.ts" });
  journals = [];
  for (let n = 1; n <= 6; n++) {
    const run = await runInProcess({ script: original, sandbox, toolset, input: { n } });
    expect(run.status).toBe("completed");
    journals.push(run.journal);
  }
}, 60_000);

describe("ReplayPool", () => {
  it("answers exactly what checkReplay answers on the main thread", async () => {
    const refactor = await compileScript({
      source: script("{ n: input.n, i }")
        .replace("let sum", "let total")
        .replaceAll("sum", "total"),
      filename: "refactor.ts",
    });
    const changed = await compileScript({
      source: script("{ i, n: input.n + (i === 4 ? 1 : 0) }"),
      filename: "changed.ts",
    });
    for (const candidate of [original, refactor, changed]) {
      const threaded = await Promise.all(journals.map((j) => pool.check(candidate, j)));
      const inline = await Promise.all(journals.map((j) => checkReplay(sandbox, candidate, j)));
      expect(threaded).toEqual(inline);
    }
    const diverged = await pool.check(changed, journals[1]!);
    expect(diverged).toMatchObject({
      matches: false,
      divergence: {
        seq: 10,
        recorded: { label: "call step({ i: 4, n: 2 })" },
        replayed: {
          label: "call step({ i: 4, n: 3 })",
          callsite: expect.stringMatching(/^changed\.ts:6:/),
        },
      },
    });
    expect(await pool.check(refactor, journals[0]!)).toEqual({ matches: true, entries: 42 });
  });

  it("previews a fork as previewFork does", async () => {
    const fixed = await compileScript({
      source: script("{ i, n: input.n + (i >= 15 ? 1 : 0) }"),
      filename: "fixed.ts",
    });
    const parent = journals[2]!;
    const started = {
      ...(parent[0] as RunStartedEntry),
      runId: "run_fork",
      parent: { runId: "p", seq: 0 },
    };
    const threaded = await pool.previewFork(fixed, started, parent);
    expect(threaded).toEqual(await previewFork(sandbox, fixed, started, parent));
    expect(threaded).toMatchObject({ reused: 30, firstLive: { seq: 32 }, runAgain: [] });
    expect(await pool.previewFork(fixed, started, parent, 11)).toMatchObject({ reused: 9 });
  });

  it("keeps the calling thread's event loop free while scripts compute", async () => {
    const heavy = await compileScript({
      source: script("{ i, n: input.n }", 6e7),
      filename: "heavy.ts",
    });
    const heavyRun = await runInProcess({ script: heavy, sandbox, toolset, input: { n: 1 } });
    // Both threads started (starting a thread is not what is measured here).
    await Promise.all(journals.slice(0, 2).map((j) => pool.check(original, j)));
    let longest = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    }, 5);
    const began = performance.now();
    const checks = await Promise.all(
      Array.from({ length: 4 }, () => pool.check(heavy, heavyRun.journal)),
    );
    const elapsed = performance.now() - began;
    clearInterval(ticker);
    expect(checks.every((c) => c.matches)).toBe(true);
    // Four replays that compute for a while (on the calling thread, each would hold the timer
    // back that long), yet the timer never waited long.
    expect(elapsed).toBeGreaterThan(300);
    expect(longest).toBeLessThan(100);
  });

  it("returns a thread's error with its code, and refuses a bad size", async () => {
    const broken = [{ seq: 1, kind: "call", at: 0 }] as never;
    await expect(pool.check(original, broken)).rejects.toMatchObject({
      code: "SANDBOX_ERROR",
      message: "a journal begins with run.started",
    });
    await expect(pool.check(original, broken)).rejects.toBeInstanceOf(RewindError);
    expect(() => new ReplayPool({ threads: 0 })).toThrow(/1 to 256 threads, got 0/);
    expect(pool.threads).toBe(2);
  });

  it("counts checks by kind and outcome, and times them (rewind_replay_*)", async () => {
    const text = await renderMetrics();
    expect(text).toMatch(/rewind_replay_checks_total\{kind="check",outcome="match"\} [1-9]/);
    expect(text).toMatch(/rewind_replay_checks_total\{kind="check",outcome="divergence"\} [1-9]/);
    expect(text).toMatch(/rewind_replay_checks_total\{kind="check",outcome="error"\} [1-9]/);
    expect(text).toMatch(/rewind_replay_checks_total\{kind="preview-fork",outcome="ok"\} [1-9]/);
    expect(text).toMatch(/rewind_replay_check_duration_seconds_count\{kind="check"\} [1-9]/);
  });
});
