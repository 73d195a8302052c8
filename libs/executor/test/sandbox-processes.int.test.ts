/**
 * Issue 17: a script that aborts the process running it (one allocation far past the isolate's
 * memory limit makes V8 give up on the whole process) must cost only its own run. Scripts run in
 * a supervised sandbox process; when it dies, the run that was executing is charged a death and
 * the others sharing the process are loaded again in a fresh one. Real processes, a real abort.
 */
import { getPriority } from "node:os";
import { describe, expect, it, vi } from "vitest";
import { defineToolset, type Json, newSeed } from "@rewind/core";
import { Executor, SANDBOX_NICE, SandboxProcesses, runInProcess } from "@rewind/executor";
import { Sandbox, SandboxLost, compileScript } from "@rewind/sandbox";
import type { Store } from "@rewind/store";
import { createRun, until, useTestStore } from "./harness.js";

let store: Store;
useTestStore("procs", (made) => (store = made));

const toolset = defineToolset("procs", { x: async (args: unknown) => ({ echoed: args }) });
const BOMB = `import { tools } from "rewind";
export default async () => { await tools.x({}); return new Array(1e9).fill(0).length; };`;
const HONEST = `import { tools } from "rewind";
export default async (input: { i: number }) => {
  const seen = [];
  for (let step = 0; step < 6; step++) {
    seen.push(await tools.x({ i: input.i, step }));
    await new Promise((resolve) => setTimeout(resolve, 150)); // alive across the bomb's deaths
  }
  return seen.length;
};`;

async function submit(
  source: string,
  input: Json = null,
  parent?: { runId: string; seq: number },
): Promise<string> {
  const script = await compileScript({ source, filename: "procs.ts" });
  return createRun(store, script, { toolset: "procs", input, ...(parent ? { parent } : {}) });
}

describe("SandboxProcesses", () => {
  it("runs a script as the in-process sandbox does, journal for journal", async () => {
    const script = await compileScript({ source: HONEST, filename: "procs.ts" });
    const local = new Sandbox();
    const remote = new SandboxProcesses();
    try {
      const options = { script, toolset, input: { i: 1 }, seed: "ab".repeat(32) };
      const here = await runInProcess({ ...options, sandbox: local });
      const there = await runInProcess({ ...options, sandbox: remote });
      expect(there.status).toBe("completed");
      expect(there.journal).toEqual(here.journal);
    } finally {
      local.dispose();
      remote.dispose();
    }
  });

  it("runs scripts at a lower CPU priority than the process that serves (a nice increment)", async () => {
    const own = getPriority();
    for (const [nice, expected] of [
      [undefined, SANDBOX_NICE],
      [7, 7],
      [0, 0],
    ] as const) {
      const pool = new SandboxProcesses(nice === undefined ? {} : { nice });
      try {
        pool.warm();
        expect(getPriority(pool.pids[0])).toBe(Math.min(19, own + expected));
      } finally {
        pool.dispose();
      }
    }
    expect(() => new SandboxProcesses({ nice: 20 })).toThrow(/0 to 19, got 20/);
  });

  it("sends a new run's start behind its instantiate, and throws the instantiate's own failure from it", async () => {
    const pool = new SandboxProcesses();
    try {
      const one = await compileScript({
        source: `export default async () => 1;`,
        filename: "one.ts",
      });
      // Answered before the context exists: the start follows down the same pipe.
      const instance = await pool.instantiate(one, { seed: newSeed(), startAt: 0, runId: "a" });
      expect(await instance.start(null)).toMatchObject([{ type: "complete", result: 1 }]);
      // An epoch this build has no runtime for fails the instantiate in the child: its start
      // throws that failure (not the child's "no instance" answer), and the run holds no room.
      const stranger = await pool.instantiate(one, {
        seed: newSeed(),
        startAt: 0,
        runId: "e",
        epoch: 99,
      });
      const failed = await stranger.start(null).catch((error: unknown) => error);
      expect(failed).toMatchObject({ code: "SANDBOX_ERROR" });
      expect((failed as Error).message).toMatch(/no guest runtime for epoch 99/);
      instance.dispose();
      expect(pool.liveRuns).toBe(0);
    } finally {
      pool.dispose();
    }
  });

  it("fails what the dead process had with SandboxLost, charging only the run executing", async () => {
    const pool = new SandboxProcesses();
    try {
      const bomb = await compileScript({
        source: `export default async () => new Array(1e9).fill(0).length;`,
        filename: "bomb.ts",
      });
      const idle = await compileScript({
        source: `export default async () => 1;`,
        filename: "one.ts",
      });
      const bystander = await pool.instantiate(idle, { seed: newSeed(), startAt: 0, runId: "b" });
      const doomed = await pool.instantiate(bomb, { seed: newSeed(), startAt: 0, runId: "d" });
      const first = pool.pids[0];
      const stderr = vi.spyOn(process.stderr, "write");
      const died = await doomed.start(null).catch((error: unknown) => error);
      expect(died).toBeInstanceOf(SandboxLost);
      expect(died).toMatchObject({ runId: "d", executing: true });
      expect((died as SandboxLost).why).toMatch(/sandbox process (was killed|exited)/);
      // What V8 writes as the child aborts (GC traces, heap statistics) never reaches this
      // process's stderr: what it says is summed up in the death's record.
      expect((died as SandboxLost).why).toMatch(/heap out of memory|saying "/);
      await new Promise((resolve) => setTimeout(resolve, 500)); // past the stderr grace
      const written = stderr.mock.calls.map(([chunk]) => String(chunk)).join("");
      stderr.mockRestore();
      expect(written).not.toMatch(/Last few GCs|FATAL ERROR|JavaScript heap/);
      const other = await bystander.start(null).catch((error: unknown) => error);
      expect(other).toMatchObject({ runId: "b", executing: false });
      // A fresh process takes the next run.
      const next = await pool.instantiate(idle, { seed: newSeed(), startAt: 0, runId: "n" });
      expect(await next.start(null)).toMatchObject([{ type: "complete", result: 1 }]);
      expect(pool.pids[0]).not.toBe(first);
    } finally {
      pool.dispose();
    }
  }, 60_000);
});

describe("a bomb beside ten honest runs sharing its sandbox process", () => {
  it("fails the bomb alone with CRASH_LOOP naming the cause, and completes the ten", async () => {
    const exits: string[] = [];
    const sandbox = new SandboxProcesses({ onExit: (why) => exits.push(why) });
    const ended = new Map<string, string>();
    const exec = new Executor({
      store,
      sandbox,
      toolsets: new Map([["procs", toolset]]),
      owner: "procs-1",
      onEnded: (id, status) => ended.set(id, status),
    });
    try {
      const honest: string[] = [];
      for (let i = 0; i < 10; i++) honest.push(await submit(HONEST, { i }));
      for (const id of honest) await exec.activate(id);
      const bomb = await submit(BOMB);
      await exec.activate(bomb);
      await until(() => [bomb, ...honest].every((id) => ended.has(id)), 90_000);
      const failed = await store.getRun(bomb);
      expect(failed?.status).toBe("failed");
      expect(failed?.error?.code).toBe("CRASH_LOOP");
      expect(failed?.error?.message).toMatch(/started 5 times in a row/);
      expect(failed?.error?.message).toMatch(/its sandbox process (was killed|exited)/);
      // Restarted past the bound: five deaths, each charged to the bomb, and no more.
      expect(exits).toHaveLength(5);
      for (const id of honest) {
        const run = await store.getRun(id);
        expect(run?.status, `${id}: ${JSON.stringify(run?.error)}`).toBe("completed");
        expect(run?.result).toBe(6);
      }
    } finally {
      await exec.close();
      sandbox.dispose();
    }
  }, 120_000);
});

describe("a fork whose first load aborts its sandbox process", () => {
  it("is charged a death each time, and fails with CRASH_LOOP naming it", async () => {
    const exits: string[] = [];
    const sandbox = new SandboxProcesses({ onExit: (why) => exits.push(why) });
    const ended = new Map<string, string>();
    const exec = new Executor({
      store,
      sandbox,
      toolsets: new Map([["procs", toolset]]),
      owner: "procs-fork",
      onEnded: (id, status) => ended.set(id, status),
    });
    try {
      const parent = await submit(`import { tools } from "rewind";
export default async () => { await tools.x({}); return 1; };`);
      await exec.activate(parent);
      await until(() => ended.has(parent), 30_000);
      // The fork's script allocates far too much at its first instruction: its first load, the
      // new script against the parent's journal, is what aborts the process.
      const fork = await submit(`export default async () => new Array(1e9).fill(0).length;`, null, {
        runId: parent,
        seq: 1,
      });
      await exec.activate(fork);
      await until(() => ended.has(fork), 180_000); // five process starts, on a loaded machine
      const failed = await store.getRun(fork);
      expect(failed?.status).toBe("failed");
      expect(failed?.error?.code, JSON.stringify(failed?.error)).toBe("CRASH_LOOP");
      expect(failed?.error?.message).toMatch(/its sandbox process (was killed|exited)/);
      expect(exits).toHaveLength(5);
    } finally {
      await exec.close();
      sandbox.dispose();
    }
  }, 240_000);
});
