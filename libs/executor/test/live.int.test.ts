import { afterAll, describe, expect, it } from "vitest";
import {
  type CallEntry,
  defineToolset,
  type Json,
  type RunStartedEntry,
  type ToolContext,
} from "@rewind/core";
import { RunEngine } from "@rewind/journal";
import { Executor, WakeUp } from "@rewind/executor";
import { ReplaySliceExceeded, Sandbox, compileScript } from "@rewind/sandbox";
import type { Store } from "@rewind/store";
import { createRun, until, useTestStore } from "./harness.js";

let store: Store;
useTestStore("live", (made) => (store = made));
const sandbox = new Sandbox({ mode: "async" });

afterAll(() => sandbox.dispose());

/** A toolset that records every call it sees, and can hold a call open until released. */
function tools() {
  const seen: { tool: string; callId: string; args: unknown }[] = [];
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const record = (tool: string) => async (args: unknown, ctx: ToolContext) => {
    seen.push({ tool, callId: ctx.callId, args });
    return { ok: tool, args };
  };
  const toolset = defineToolset("live", {
    charge: record("charge"),
    slow: async (args: unknown, ctx: ToolContext) => {
      seen.push({ tool: "slow", callId: ctx.callId, args });
      await gate;
      return "slow done";
    },
    email: { run: record("email"), unsafeToRepeat: true },
  });
  return { seen, toolset, release: () => release() };
}

async function submit(source: string, input: Json = null): Promise<string> {
  const script = await compileScript({ source, filename: "live.ts" });
  return createRun(store, script, { toolset: "live", input });
}

function executor(
  toolset: ReturnType<typeof tools>["toolset"],
  owner: string,
  extra: Partial<ConstructorParameters<typeof Executor>[0]> = {},
) {
  const ended = new Map<string, string>();
  const exec = new Executor({
    store,
    sandbox,
    toolsets: new Map([["live", toolset]]),
    owner,
    onEnded: (id, status) => ended.set(id, status),
    ...extra,
  });
  return { exec, ended };
}

describe("the live executor over Postgres", () => {
  it("runs a script to completion, journaling each call before its tool runs", async () => {
    const { seen, toolset } = tools();
    const { exec } = executor(toolset, "w1");
    const runId = await submit(
      `import { tools } from "rewind";
      export default async (input: { n: number }) => { const a = await tools.charge({ n: input.n }); console.log("charged"); return a; };`,
      { n: 7 },
    );
    await exec.activate(runId);
    await until(async () => (await store.getRun(runId))?.status === "completed");
    const run = await store.getRun(runId);
    expect(run?.result).toEqual({ args: { n: 7 }, ok: "charge" });
    const journal = await store.readJournal(runId);
    expect(journal.map((e) => e.kind)).toEqual([
      "run.started",
      "call",
      "call.result",
      "output",
      "run.completed",
    ]);
    expect(seen).toEqual([
      { tool: "charge", callId: (journal[1] as CallEntry).callId, args: { n: 7 } },
    ]);
    await exec.close();
  });

  it("delivers signals and cancels through the inbox", async () => {
    const { toolset } = tools();
    const { exec } = executor(toolset, "w2");
    const source = `import { waitForSignal } from "rewind";
      export default async () => (await waitForSignal("approval")) ?? "none";`;
    const approved = await submit(source);
    await exec.activate(approved);
    expect((await store.getRun(approved))?.status).toBe("waiting");
    await store.addInbox(approved, { kind: "signal", name: "approval", payload: { yes: true } });
    await exec.activate(approved);
    await until(async () => (await store.getRun(approved))?.status === "completed");
    expect((await store.getRun(approved))?.result).toEqual({ yes: true });

    const cancelled = await submit(source);
    await exec.activate(cancelled);
    await store.addInbox(cancelled, { kind: "cancel" });
    await exec.activate(cancelled);
    expect((await store.getRun(cancelled))?.status).toBe("cancelled");
    expect((await store.readJournal(cancelled)).at(-1)).toMatchObject({ kind: "run.cancelled" });
    expect(await store.pendingInbox(cancelled)).toEqual([]);
    await exec.close();
  });

  it("keeps timers durable: a sleep set before a restart fires after it", async () => {
    const { toolset } = tools();
    const first = executor(toolset, "w3-a");
    const runId = await submit(`import { sleep } from "rewind";
      export default async () => { const t = Date.now(); await sleep(300); return Date.now() - t >= 300; };`);
    await first.exec.activate(runId);
    expect((await store.getRun(runId))?.status).toBe("waiting");
    await first.exec.close(); // the process goes away; the timer is a row

    const second = executor(toolset, "w3-b");
    const wake = new WakeUp(store, (r) => second.exec.activate(r.runId), { pollMs: 50 });
    wake.start();
    await until(async () => (await store.getRun(runId))?.status === "completed");
    expect((await store.getRun(runId))?.result).toBe(true);
    wake.stop();
    await second.exec.close();
  });

  it("after a crash runs an in-flight call again with the same callId, and a completed one never", async () => {
    const { seen, toolset, release } = tools();
    const crashed = executor(toolset, "w4-a", { leaseTtlMs: 60_000 });
    const runId = await submit(`import { tools } from "rewind";
      export default async () => [await tools.charge({ step: 1 }), await tools.slow({ step: 2 })];`);
    await crashed.exec.activate(runId);
    await until(() => seen.some((s) => s.tool === "slow"));
    // The process dies mid-call: no close, its lease is still held. A new incarnation steals it.
    const recovered = executor(toolset, "w4-b", { stealLeases: true });
    await new WakeUp(store, (r) => recovered.exec.activate(r.runId)).recover();
    release();
    await until(async () => (await store.getRun(runId))?.status === "completed");
    const slowCalls = seen.filter((s) => s.tool === "slow");
    expect(slowCalls).toHaveLength(2); // the crashed process's, and the recovery's
    expect(slowCalls[0]!.callId).toBe(slowCalls[1]!.callId);
    expect(seen.filter((s) => s.tool === "charge")).toHaveLength(1);
    // The crashed owner's late result is refused: the journal has exactly one outcome per call.
    const journal = await store.readJournal(runId);
    expect(journal.filter((e) => e.kind === "call.result")).toHaveLength(2);
    await recovered.exec.close();
    await crashed.exec.close();
  });

  it("never calls an unsafeToRepeat tool again after a crash: the run fails saying why", async () => {
    const { toolset } = tools();
    const runId = await submit(`import { tools } from "rewind";
      export default async () => tools.email({ to: "a@example.com" });`);
    // Simulate a crash after the call was journaled: append the call entry by hand, as the owner.
    const lease = (await store.acquireLease(runId, "w5-crashed", 60_000))!;
    const call: CallEntry = {
      seq: 2,
      kind: "call",
      at: Date.now(),
      name: "email",
      args: { to: "a@example.com" },
      callId: `${runId}/2`,
    };
    expect(
      await store.commit([{ lease, afterSeq: 1, entries: [call], status: "running" }]),
    ).toEqual(["ok"]);
    const { exec } = executor(toolset, "w5", { stealLeases: true });
    await exec.activate(runId);
    const run = await store.getRun(runId);
    expect(run?.status).toBe("failed");
    expect(run?.error?.code).toBe("UNSAFE_TO_REPEAT");
    await exec.close();
  });

  it("fences a stale owner: its append is refused and it drops its hot copy", async () => {
    const { toolset, release } = tools();
    const a = executor(toolset, "w6-a");
    const runId = await submit(`import { tools } from "rewind";
      export default async () => tools.slow({});`);
    await a.exec.activate(runId);
    expect(a.exec.hotRuns).toBe(1);
    const b = executor(toolset, "w6-b", { stealLeases: true });
    await b.exec.activate(runId); // takes the lease, replays, runs the call again
    release();
    await until(async () => (await store.getRun(runId))?.status === "completed");
    await until(() => a.exec.hotRuns === 0); // A's late result met LEASE_LOST
    expect((await store.readJournal(runId)).filter((e) => e.kind === "call.result")).toHaveLength(
      1,
    );
    await a.exec.close();
    await b.exec.close();
  });
});

describe("a run ended while calls are in flight", () => {
  it("records the outcomes of calls still in flight when it is cancelled, then leaves memory", async () => {
    const { toolset, release } = tools();
    const { exec, ended } = executor(toolset, "w7");
    const runId = await submit(`import { tools } from "rewind";
      export default async () => tools.slow({});`);
    await exec.activate(runId);
    await store.addInbox(runId, { kind: "cancel" });
    await exec.activate(runId);
    expect((await store.getRun(runId))?.status).toBe("cancelled");
    release();
    await until(async () => (await store.readJournal(runId)).some((e) => e.kind === "call.result"));
    expect((await store.readJournal(runId)).map((e) => e.kind)).toEqual([
      "run.started",
      "call",
      "run.cancelled",
      "call.result",
    ]);
    await until(() => exec.hotRuns === 0);
    expect(ended.get(runId)).toBe("cancelled");
    await exec.close();
  });
});

describe("a run that keeps taking its process down", () => {
  it("is failed with CRASH_LOOP after five loads without progress; a waiting run never is", async () => {
    const { toolset } = tools();
    const crashing = await submit(`import { tools } from "rewind";
      export default async () => tools.charge({ n: 1 });`);
    for (let attempt = 1; attempt <= 5; attempt++) {
      // Dies before the first commit, every time: as a heap blow-up would.
      const doomed = executor(toolset, `doomed-${attempt}`, {
        stealLeases: true,
        crashAt: () => true,
      });
      await doomed.exec.activate(crashing);
      // Taken (running), never journaled past its start.
      expect((await store.getRun(crashing))?.status, `attempt ${attempt}`).toBe("running");
      expect((await store.getRun(crashing))?.lastSeq, `attempt ${attempt}`).toBe(1);
    }
    const { exec, ended } = executor(toolset, "survivor", { stealLeases: true });
    await exec.activate(crashing);
    const run = await store.getRun(crashing);
    expect(run?.status).toBe("failed");
    expect(run?.error?.code).toBe("CRASH_LOOP");
    expect(run?.error?.message).toContain(
      "started 5 times in a row without journaling any progress",
    );
    expect(ended.get(crashing)).toBe("failed");

    const waiting = await submit(`import { waitForSignal } from "rewind";
      export default async () => waitForSignal("go");`);
    for (let load = 1; load <= 8; load++) {
      // Loaded, then abandoned without a clean hand-back (kill -9): the run only waits.
      const gone = executor(toolset, `gone-${load}`, { stealLeases: true });
      await gone.exec.activate(waiting);
    }
    await store.addInbox(waiting, { kind: "signal", name: "go", payload: 1 });
    await exec.activate(waiting);
    expect((await store.getRun(waiting))?.status).toBe("completed");
    await exec.close();
  });
});

describe("a run that dies on a call's outcome, every time", () => {
  it("is failed with CRASH_LOOP: the call run again on each load is no progress", async () => {
    // The bomb of issue 17: `await tools.x(); new Array(1e9).fill(0)`. Each incarnation loads it,
    // runs the call again (its outcome was never journaled) and dies delivering the outcome.
    let calledHere = false;
    const toolset = defineToolset("live", {
      charge: async () => {
        calledHere = true;
        return "charged";
      },
    });
    const bomb = await submit(`import { tools } from "rewind";
      export default async () => { await tools.charge({}); return "never"; };`);
    let incarnations = 0;
    for (; incarnations < 10; incarnations++) {
      if ((await store.getRun(bomb))?.status === "failed") break;
      calledHere = false;
      const doomed = executor(toolset as never, `bomb-${incarnations}`, {
        stealLeases: true,
        // Dies as the outcome is delivered, before anything of it is journaled.
        crashAt: (point) => point === "produced" && calledHere,
      });
      await doomed.exec.activate(bomb);
      await until(async () => calledHere || (await store.getRun(bomb))?.status === "failed");
      await new Promise((resolve) => setTimeout(resolve, 50)); // the outcome's activation dies
    }
    const run = await store.getRun(bomb);
    expect(run?.status, `after ${incarnations} incarnations`).toBe("failed");
    expect(run?.error?.code).toBe("CRASH_LOOP");
    expect(run?.lastSeq).toBe(3); // started, the call, the verdict: the outcome never
    expect(incarnations).toBeLessThanOrEqual(7);
  });
});

describe("far timers of hot runs", () => {
  it("arm 30 days, a year and the largest wait without a busy loop", async () => {
    const { toolset } = tools();
    const { exec } = executor(toolset, "sleeper");
    const waits = [`"30d"`, `"365d"`, `8.64e15 - Date.now()`];
    const runs: string[] = [];
    for (const wait of waits) {
      const runId = await submit(`import { sleep } from "rewind";
        export default async () => { await sleep(${wait}); return "woke"; };`);
      await exec.activate(runId);
      expect((await store.getRun(runId))?.status).toBe("waiting");
      runs.push(runId);
    }
    // Node fires a timeout past 2^31-1 ms after 1 ms: armed as one, each of these would wake
    // the executor about a thousand times a second. Count the timeouts armed for a second.
    const armed: unknown[] = [];
    const original = globalThis.setTimeout;
    globalThis.setTimeout = ((callback: () => void, ms?: number) => {
      armed.push(ms);
      return original(callback, ms);
    }) as typeof setTimeout;
    try {
      await new Promise((resolve) => original(resolve, 1000));
    } finally {
      globalThis.setTimeout = original;
    }
    expect(armed.length, `timeouts armed: ${armed.slice(0, 10).join(", ")}…`).toBeLessThan(50);
    for (const runId of runs) expect((await store.getRun(runId))?.status).toBe("waiting");
    await exec.close();
  });
});

describe("a run with many timers due at once", () => {
  it("fires them all, a bounded number per turn, each turn one commit", async () => {
    const { toolset } = tools();
    const { exec, ended } = executor(toolset, "timers");
    const runId = await submit(`export default async () => {
      const due = Date.now() + 300;
      await Promise.all(Array.from({ length: 300 }, () => new Promise((resolve) => setTimeout(resolve, due - Date.now()))));
      return "all fired";
    };`);
    await exec.activate(runId);
    await until(() => ended.has(runId), 20_000);
    const run = await store.getRun(runId);
    expect(run?.status, JSON.stringify(run?.error)).toBe("completed");
    const journal = await store.readJournal(runId);
    expect(journal.filter((e) => e.kind === "timer.fired")).toHaveLength(300);
    // Delivered 64 a turn, each turn's firings in one commit: a few commits, not 300.
    expect(
      new Set(journal.filter((e) => e.kind === "timer.fired").map((e) => e.at)).size,
    ).toBeLessThan(10);
    await exec.close();
  });
});

describe("cold replay in fast slices", () => {
  it("replays a heavy script again in async mode when a slice runs out, and carries on", async () => {
    const { toolset } = tools();
    const runId = await submit(`import { tools } from "rewind";
      export default async () => {
        const a = await tools.charge({ n: 1 });
        let x = 0;
        for (let i = 0; i < 3e7; i++) x += i % 7; // tens of ms of CPU on replay: longer than a slice
        const b = await tools.charge({ n: x % 5 });
        return [a.args, b.args];
      };`);
    const slow = new Sandbox({ mode: "async", replaySliceMs: 5 });
    const first = new Executor({
      store,
      sandbox: slow,
      toolsets: new Map([["live", toolset]]),
      owner: "slice-a",
    });
    await first.activate(runId);
    await until(async () => (await store.getRun(runId))?.status === "completed");
    // Replayed cold with fast replay, the heavy activation overruns its slice: the engine meets it
    // as an error, which the executor answers by replaying in async mode (the next test).
    const journal = await store.readJournal(runId);
    const script = (await store.getScript("default", (await store.getRun(runId))!.scriptHash))!;
    const instance = await slow.instantiate(script, {
      seed: (journal[0] as RunStartedEntry).seed,
      startAt: journal[0]!.at,
      fastReplay: true,
    });
    await expect(RunEngine.resume(instance, journal)).rejects.toBeInstanceOf(ReplaySliceExceeded);
    await first.close();
    slow.dispose();
  });

  it("loads a cold run through a slice overrun and finishes it", async () => {
    const { toolset, release } = tools();
    const runId = await submit(`import { tools } from "rewind";
      export default async () => {
        await tools.charge({ n: 1 });
        let x = 0;
        for (let i = 0; i < 3e7; i++) x += i % 7;
        return tools.slow({ x: x % 3 });
      };`);
    const slow = new Sandbox({ mode: "async", replaySliceMs: 5 });
    const a = new Executor({
      store,
      sandbox: slow,
      toolsets: new Map([["live", toolset]]),
      owner: "slice-b1",
    });
    await a.activate(runId);
    await until(async () =>
      (await store.readJournal(runId)).some((e) => e.kind === "call" && e.name === "slow"),
    );
    const b = new Executor({
      store,
      sandbox: slow,
      toolsets: new Map([["live", toolset]]),
      owner: "slice-b2",
      stealLeases: true,
    });
    await b.activate(runId); // cold: the fast replay overruns its slice, the async replay carries on
    release();
    await until(async () => (await store.getRun(runId))?.status === "completed");
    await a.close();
    await b.close();
    slow.dispose();
  });
});

describe("duplicate activations", () => {
  it("never append twice: the same run activated again and again by two workers at once", async () => {
    const { seen, toolset } = tools();
    const a = executor(toolset, "dup-a");
    const b = executor(toolset, "dup-b");
    const source = `import { tools } from "rewind";
      export default async (input: { n: number }) => {
        let total = 0;
        for (let i = 0; i < 5; i++) total += (await tools.charge({ n: input.n, i })).args.i;
        return total;
      };`;
    const ids = await Promise.all(Array.from({ length: 10 }, (_, n) => submit(source, { n })));
    // The same doorbell delivered to both workers, several times, while runs are under way (a job
    // enqueued twice; a job redelivered after a stalled lock while the first delivery still runs).
    for (let round = 0; round < 5; round++) {
      await Promise.all(ids.flatMap((id) => [a.exec.activate(id), b.exec.activate(id)]));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await until(async () => {
      const runs = await Promise.all(ids.map((id) => store.getRun(id)));
      return runs.every((run) => run?.status === "completed");
    }, 20_000);
    for (const id of ids) {
      const journal = await store.readJournal(id);
      expect(journal.map((e) => e.kind)).toEqual([
        "run.started",
        ...Array.from({ length: 5 }, () => ["call", "call.result"]).flat(),
        "run.completed",
      ]);
      expect((await store.getRun(id))?.result).toBe(10);
    }
    // Each call reached the tool once: a duplicate activation found the lease taken.
    const callIds = seen.map((s) => s.callId);
    expect(new Set(callIds).size).toBe(callIds.length);
    expect(callIds).toHaveLength(50);
    await Promise.all([a.exec.close(), b.exec.close()]);
  });
});

describe("the hot-run cache", () => {
  it("stays within its bound in heap bytes, dropping the least recently active idle runs", async () => {
    const { toolset } = tools();
    const bounded = new Sandbox({ mode: "async", runsPerIsolate: 16 });
    const { exec } = executor(toolset, "bounded", { sandbox: bounded, maxHotBytes: 8 * 1024 ** 2 });
    try {
      const source = `import { waitForSignal } from "rewind";
        const ballast = Array.from({ length: 2000 }, (_, i) => ({ i, text: "x".repeat(100) }));
        export default async () => (await waitForSignal("go")) ?? ballast.length;`;
      const ids = await Promise.all(Array.from({ length: 60 }, () => submit(source)));
      for (const id of ids) {
        await exec.activate(id);
        await new Promise((resolve) => setTimeout(resolve, 20)); // one heap reading a second at most
      }
      // Each run holds ~300 KB: 60 of them would need ~18 MB of heap; bounded by 8 MB, the cache
      // let the oldest go. (The heap itself shrinks only when V8 next collects.)
      expect(exec.hotRuns).toBeLessThan(45);
      expect(exec.hotRuns).toBeGreaterThan(0);
      // An evicted run is replayed cold when it is needed, and completes.
      await store.addInbox(ids[0]!, { kind: "signal", name: "go", payload: 1 });
      await exec.activate(ids[0]!);
      await until(async () => (await store.getRun(ids[0]!))?.status === "completed");
    } finally {
      await exec.close();
      bounded.dispose();
    }
  }, 60_000);
});

describe("live activations in sync slices", () => {
  it("rebuilds a run whose live code outruns its slice, delivering the event again: no call twice", async () => {
    const { seen, toolset } = tools();
    const { exec } = executor(toolset, "slices");
    const runId = await submit(
      `import { tools } from "rewind";
      export default async () => {
        const first = await tools.charge({ step: 1 });
        let x = 0;
        for (let i = 0; i < 30_000_000; i++) x = (x * 31 + i) % 1_000_003; // ~200 ms: past a 20 ms slice
        const second = await tools.charge({ step: 2, x });
        return [first.args, second.args];
      };`,
    );
    await exec.activate(runId);
    await until(async () => (await store.getRun(runId))?.status === "completed", 20_000);
    const journal = await store.readJournal(runId);
    expect(journal.map((e) => e.kind)).toEqual([
      "run.started",
      "call",
      "call.result",
      "call",
      "call.result",
      "run.completed",
    ]);
    expect(seen.map((s) => s.args)).toEqual([{ step: 1 }, { step: 2, x: expect.any(Number) }]);
    expect(new Set(seen.map((s) => s.callId)).size).toBe(2);
    await exec.close();
  }, 30_000);

  it("starts a run whose top level outruns its slice again, async, and finishes it", async () => {
    const { seen, toolset } = tools();
    const { exec } = executor(toolset, "slices-top");
    const runId = await submit(
      `import { tools } from "rewind";
      let x = 0;
      for (let i = 0; i < 30_000_000; i++) x = (x * 31 + i) % 1_000_003; // ~200 ms at the top level
      export default async () => (await tools.charge({ x })).args;`,
    );
    await exec.activate(runId);
    await until(async () => (await store.getRun(runId))?.status === "completed", 20_000);
    const journal = await store.readJournal(runId);
    expect(journal.map((e) => e.kind)).toEqual([
      "run.started",
      "call",
      "call.result",
      "run.completed",
    ]);
    expect(seen).toHaveLength(1);
    await exec.close();
  }, 30_000);
});
