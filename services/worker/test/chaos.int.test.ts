/**
 * Issue 4's acceptance on a real cluster (api and workers as processes, Postgres, Redis): workers
 * SIGKILLed every second during 500 runs, a worker paused past its lease, and a CPU-heavy script
 * beside a latency probe. The invariants of docs/durability.md must hold under each.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JournalEntry } from "@rewind/core";
import { runInProcess } from "@rewind/executor";
import { Sandbox, compileScript, type CompiledScript } from "@rewind/sandbox";
import type { Toolset } from "@rewind/sdk";
import { Cluster, fixtures, pause, root, until } from "./cluster-harness.js";

const here = path.join(root, "services/worker/test/fixtures");
const ENDED = new Set(["completed", "failed", "cancelled"]);

/** What a journal says, without wall-clock times, ids or timers (whose firing order is wall time). */
const shape = (journal: readonly JournalEntry[]) =>
  journal
    .filter((e) => !e.kind.startsWith("timer."))
    .map((e) => {
      const {
        at: _at,
        seq: _seq,
        callId: _callId,
        runId: _runId,
        ...rest
      } = e as JournalEntry & Record<string, unknown>;
      return rest;
    });

describe("three workers, one SIGKILLed every second, 500 runs", () => {
  const cluster = new Cluster({
    env: { REWIND_LEASE_MS: "2000", REWIND_STICKY_TIMEOUT_MS: "500" },
  });
  beforeAll(() => cluster.start(), 60_000);
  afterAll(() => cluster.close(), 30_000);

  it("completes every run with a clean run's journal; each callId reaches the outside with one body; an unsafe tool never twice", async () => {
    const scripts = await Promise.all(
      [
        path.join(root, "examples/hello.ts"),
        path.join(root, "examples/agent.ts"),
        path.join(fixtures, "steps.ts"),
        path.join(here, "notify.ts"),
      ].map((file) => compileScript({ file })),
    );
    const inputOf = (script: CompiledScript, i: number) =>
      script.entry === "agent.ts"
        ? { goal: `goal ${i}` }
        : script.entry === "hello.ts"
          ? { name: `n${i}` }
          : { id: i };
    const runs: { id: string; script: CompiledScript; input: unknown }[] = [];
    for (let i = 0; i < 500; i++) {
      const script = scripts[i % scripts.length]!;
      const input = inputOf(script, i);
      const { id } = await cluster.api.runs.start({ script, input, toolset: "shop" });
      runs.push({ id, script, input });
    }
    // The workers come once all 500 are queued, so the kills below land while runs are open
    // (started first, the workers finished most runs while they were being submitted).
    for (let i = 0; i < 3; i++) await cluster.startWorker();

    // Kill a random worker every second and start a new one in its place, until all runs end.
    let kills = 0;
    const deadline = Date.now() + 150_000;
    for (;;) {
      const open = await openRuns(cluster, runs.length);
      if (open === 0) break;
      if (Date.now() > deadline) throw new Error(`${open} runs still open after ${kills} kills`);
      const alive = cluster.workers.filter((w) => w.alive && w.ready);
      if (kills < 20 && alive.length > 1) {
        await alive[Math.floor(Math.random() * alive.length)]!.kill("SIGKILL");
        kills++;
        void cluster.startWorker().catch(() => {}); // it may be killed before it is ready
      }
      await pause(1000);
    }
    console.log(`500 runs ended; ${kills} workers killed with SIGKILL`);
    expect(kills).toBeGreaterThanOrEqual(5);

    // Every run ended; completed ones carry the journal a clean run (same seed) produces. A run
    // may fail only because its unsafe call was in flight at a kill: it must not run twice.
    const sandbox = new Sandbox();
    const toolset = (await import(path.join(fixtures, "counting-tools.ts"))).default as Toolset;
    let unsafeFailures = 0;
    try {
      for (const { id, script, input } of runs) {
        const run = await cluster.api.runs.get(id);
        const { entries } = await cluster.api.runs.journal(id);
        expect(
          entries.filter((e) => e.kind.startsWith("run.") && e.kind !== "run.started"),
        ).toHaveLength(1);
        if (run.status === "failed" && run.error?.code === "UNSAFE_TO_REPEAT") {
          unsafeFailures++;
          continue;
        }
        expect(run.status, `${id} (${script.entry}): ${JSON.stringify(run.error)}`).toBe(
          "completed",
        );
        const started = entries[0] as Extract<JournalEntry, { kind: "run.started" }>;
        const clean = await runInProcess({
          script,
          sandbox,
          toolset,
          input: input as null,
          seed: started.seed,
          startAt: started.at,
          runId: started.runId,
        });
        expect(shape(entries), `${id} (${script.entry})`).toEqual(shape(clean.journal));
      }
    } finally {
      sandbox.dispose();
    }
    // Each kill fails the unsafe calls its worker had in flight (several, with 64 activations at
    // once), and nothing else: a few per kill, far fewer than the 125 runs that make one. How
    // many are in flight depends on the machine's load (28 for 11 kills seen on a loaded CI).
    expect(unsafeFailures).toBeLessThanOrEqual(4 * kills);
    // The outside world saw each callId with one body, and the unsafe tool each callId once.
    for (const [callId, call] of cluster.counter.seen) {
      expect(call.bodies.size, callId).toBe(1);
      if (call.tool === "sendEmail") expect(call.calls, callId).toBe(1);
    }
    expect(cluster.counter.seen.size).toBeGreaterThan(500 * 3);
  }, 240_000);
});

describe("a worker paused past its lease", () => {
  const cluster = new Cluster({
    env: { REWIND_LEASE_MS: "1500", REWIND_STICKY_TIMEOUT_MS: "300" },
  });
  beforeAll(() => cluster.start(), 60_000);
  afterAll(() => cluster.close(), 30_000);

  it("has its late appends refused after SIGCONT; the run completes elsewhere exactly once", async () => {
    const first = await cluster.startWorker({ health: true });
    const script = await compileScript({ file: path.join(here, "slow.ts") });
    const { id } = await cluster.api.runs.start({
      script,
      input: { key: "paused", ms: 2500 },
      toolset: "shop",
    });
    // The slow call is in flight on the first worker: pause that worker.
    const slowCall = await until(
      "the slow call to reach the outside",
      async () => [...cluster.counter.seen].find(([, c]) => c.tool === "slow"),
      20_000,
    );
    first.worker.child.kill("SIGSTOP");
    const second = await cluster.startWorker({ health: true });
    // Its lease runs out; the second worker takes the run over, runs the call again (same
    // callId, same body) and completes the run.
    const run = await until(
      "the run to complete on the second worker",
      async () => {
        const r = await cluster.api.runs.get(id);
        return r.status === "completed" ? r : undefined;
      },
      30_000,
    );
    expect(run.result).toEqual({ key: "paused", answer: 6 });
    expect(cluster.counter.seen.get(slowCall[0])).toMatchObject({ calls: 2 });
    expect(cluster.counter.seen.get(slowCall[0])!.bodies.size).toBe(1);

    // The first worker wakes up: its call finishes, and its append is refused (LEASE_LOST).
    first.worker.child.kill("SIGCONT");
    const lost = await until(
      "the paused worker's append to be refused",
      async () => {
        const text = await (await fetch(`${first.healthUrl}/metrics`)).text();
        const line = text
          .split("\n")
          .find((l) => l.startsWith('rewind_executor_appends_total{outcome="lease_lost"}'));
        return line !== undefined && Number(line.split(" ")[1]) >= 1 ? line : undefined;
      },
      15_000,
    );
    expect(lost).toBeDefined();
    await pause(500);
    const { entries } = await cluster.api.runs.journal(id);
    expect(entries.map((e) => e.kind)).toEqual([
      "run.started",
      "call",
      "call.result",
      "call",
      "call.result",
      "run.completed",
    ]);
    expect(first.worker.alive).toBe(true);
    expect(second.worker.alive).toBe(true);
  }, 120_000);
});

describe("a CPU-heavy script beside a latency probe", () => {
  const cluster = new Cluster();
  beforeAll(() => cluster.start(), 60_000);
  afterAll(() => cluster.close(), 30_000);

  it("never blocks the worker's event loop: health checks answer promptly throughout", async () => {
    const { healthUrl } = await cluster.startWorker({ health: true });
    const script = await compileScript({ file: path.join(here, "busy.ts") });
    const ids: string[] = [];
    for (let i = 0; i < 2; i++)
      ids.push(
        (await cluster.api.runs.start({ script, input: { rounds: 6, ms: 300 }, toolset: "shop" }))
          .id,
      );
    const latencies: number[] = [];
    let done = false;
    const probe = (async () => {
      while (!done) {
        const started = performance.now();
        await fetch(`${healthUrl}/healthz`);
        latencies.push(performance.now() - started);
        await pause(10);
      }
    })();
    for (const id of ids) {
      const result = await cluster.api.runs.result(id, "60s");
      expect(result.status).toBe("completed");
    }
    done = true;
    await probe;
    latencies.sort((a, b) => a - b);
    const p99 = latencies[Math.floor(latencies.length * 0.99)]!;
    const max = latencies.at(-1)!;
    console.log(
      `health probe during ~3.6 s of script CPU: ${latencies.length} probes, p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms`,
    );
    // A blocked loop would show each 300 ms stretch of script CPU.
    expect(latencies.length).toBeGreaterThan(50);
    expect(p99).toBeLessThan(100);
    expect(max).toBeLessThan(250);
  }, 120_000);
});

async function openRuns(cluster: Cluster, total: number): Promise<number> {
  let open = 0;
  let seen = 0;
  let before: string | undefined;
  for (;;) {
    const page = await cluster.api.runs.list({ limit: 500, ...(before ? { before } : {}) });
    seen += page.runs.length;
    open += page.runs.filter((r) => !ENDED.has(r.status)).length;
    if (page.next === undefined || page.runs.length === 0) break;
    before = page.next;
  }
  return seen < total ? total : open;
}

describe("graceful shutdown", () => {
  const cluster = new Cluster({
    env: { REWIND_LEASE_MS: "3000", REWIND_STICKY_TIMEOUT_MS: "300" },
  });
  beforeAll(() => cluster.start(), 60_000);
  afterAll(() => cluster.close(), 30_000);

  it("on SIGTERM finishes calls in flight, hands its runs back, and exits; another worker goes on", async () => {
    const first = await cluster.startWorker();
    const slow = await compileScript({ file: path.join(here, "slow.ts") });
    const waiting = await compileScript({
      source: `import { waitForSignal, tools } from "rewind";
        export default async () => {
          const go = await waitForSignal<{ n: number }>("go");
          return (await tools.lookup({ q: "n".repeat(go?.n ?? 0) })).answer;
        };`,
      filename: "waits.ts",
    });
    const busy = await cluster.api.runs.start({
      script: slow,
      input: { key: "graceful", ms: 3000 },
      toolset: "shop",
    });
    const idle = await cluster.api.runs.start({ script: waiting, input: null, toolset: "shop" });
    await until(
      "the slow call to be in flight",
      async () => [...cluster.counter.seen.values()].some((c) => c.tool === "slow"),
      20_000,
    );
    await until(
      "the idle run to wait",
      async () => (await cluster.api.runs.get(idle.id)).status === "waiting",
      20_000,
    );
    await cluster.startWorker();
    first.worker.child.kill("SIGTERM");
    expect(await first.worker.exited).toBe(0);
    expect(first.worker.log).toContain("stopping");
    // It waited for the call in flight rather than leaving it to run again elsewhere.
    const slowCalls = [...cluster.counter.seen.values()].filter((c) => c.tool === "slow");
    expect(slowCalls).toEqual([expect.objectContaining({ calls: 1 })]);
    // Both runs go on at the other worker at once, without waiting for a lease to expire.
    await cluster.api.runs.signal(idle.id, "go", { n: 4 });
    for (const id of [busy.id, idle.id]) {
      const result = await cluster.api.runs.result(id, "20s");
      expect(result.status, id).toBe("completed");
    }
    expect((await cluster.api.runs.get(idle.id)).result).toBe(4);
    expect([...cluster.counter.seen.values()].filter((c) => c.tool === "slow")).toEqual([
      expect.objectContaining({ calls: 1 }),
    ]);
  }, 90_000);
});
