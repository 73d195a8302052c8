/**
 * A new run's first ring carries its script, seed and clock (FirstActivation): the worker makes
 * the sandbox context while it takes the lease and reads the journal (issue 18's start hops). A
 * hint only: the context is used when the journal holds exactly that run's start, and otherwise
 * let go, the run replayed as if no hint had come. A ring that carries the whole start (in the
 * clear) runs the top level at once and takes the lease in the first commit, unread, unless the
 * run is no longer as it was created: then it takes the usual path.
 */
import { describe, expect, it } from "vitest";
import { defineToolset, firstActivationOf, type RunStartedEntry } from "@rewind/core";
import { Executor } from "@rewind/executor";
import {
  Sandbox,
  compileScript,
  type CompiledScript,
  type InstantiateOptions,
  type ScriptHandle,
  type ScriptSandbox,
} from "@rewind/sandbox";
import type { Store } from "@rewind/store";
import { createRun, until, useTestStore } from "./harness.js";

let store: Store;
useTestStore("first", (made) => (store = made));

/** What happened, in order: contexts asked for (by seed) and runs read ("read <runId>"). */
const events: string[] = [];

/** A sandbox that says which contexts it made (by seed) and which were let go unused. */
class CountingSandbox implements ScriptSandbox {
  readonly made: string[] = [];
  readonly disposed: string[] = [];
  constructor(private readonly inner = new Sandbox()) {}
  get options() {
    return this.inner.options;
  }
  get liveRuns() {
    return this.inner.liveRuns;
  }
  heapUsedBytes() {
    return this.inner.heapUsedBytes();
  }
  async instantiate(script: CompiledScript, run: InstantiateOptions): Promise<ScriptHandle> {
    events.push(run.seed);
    const handle = await this.inner.instantiate(script, run);
    this.made.push(run.seed);
    const dispose = handle.dispose.bind(handle);
    handle.dispose = () => {
      this.disposed.push(run.seed);
      dispose();
    };
    return handle;
  }
  dispose() {
    this.inner.dispose();
  }
}

const SOURCE = `import { tools } from "rewind";
export default async (input: { n: number }) => ({ n: await tools.echo(input.n), r: Math.random() });`;

describe("a new run's first ring", () => {
  it("makes its context before the journal is read, and never trusts a hint that differs", async () => {
    const sandbox = new CountingSandbox();
    const results = new Map<string, unknown>();
    // The store, telling when a run's lease and journal were read.
    const reading: Store = Object.create(store, {
      loadRun: {
        value: async (runId: string, ...rest: unknown[]) => {
          const loaded = await (store.loadRun as (...args: unknown[]) => unknown)(runId, ...rest);
          events.push(`read ${runId}`);
          return loaded;
        },
      },
    });
    const exec = new Executor({
      store: reading,
      sandbox,
      toolsets: new Map([["first", defineToolset("first", { echo: async (n: unknown) => n })]]),
      owner: "first-1",
      onEnded: (id) => results.set(id, id),
    });
    const startedOf = async (runId: string) =>
      (await store.readJournal(runId))[0] as RunStartedEntry;
    try {
      const script = await compileScript({ source: SOURCE, filename: "first.ts" });

      // The hint as the API sends it: one context, made from it, runs the whole run.
      const hinted = await createRun(store, script, { toolset: "first", input: { n: 1 } });
      const started = await startedOf(hinted);
      await exec.activate(hinted, false, { first: firstActivationOf(started) });
      await until(() => results.has(hinted), 20_000, "the hinted run to end");
      expect(sandbox.made).toEqual([started.seed]);
      expect(events).toEqual([started.seed, `read ${hinted}`]); // asked for before the read
      expect((await store.getRun(hinted))?.status).toBe("completed");

      // A hint that is not this run's start (another seed): its context is let go unused, and
      // the run goes on with its journal's seed, as without a hint.
      const forged = await createRun(store, script, { toolset: "first", input: { n: 2 } });
      const real = await startedOf(forged);
      const otherSeed = "0".repeat(64);
      await exec.activate(forged, false, {
        first: { ...firstActivationOf(real), seed: otherSeed },
      });
      await until(() => results.has(forged), 20_000, "the run with a wrong hint to end");
      await until(() => sandbox.disposed.includes(otherSeed), 5_000, "the unused context let go");
      expect(sandbox.made.slice(1).sort()).toEqual([otherSeed, real.seed].sort());
      const journal = await store.readJournal(forged);
      expect(journal.at(-1)).toMatchObject({ kind: "run.completed", result: { n: 2 } });
    } finally {
      await exec.close();
      sandbox.dispose();
    }
  }, 60_000);

  it("runs a start it carries at once, its lease taken in its first commit, or else as usual", async () => {
    const sandbox = new CountingSandbox();
    const results = new Map<string, unknown>();
    const reads: string[] = [];
    const reading: Store = Object.create(store, {
      loadRun: {
        value: async (runId: string, ...rest: unknown[]) => {
          reads.push(runId);
          return (store.loadRun as (...args: unknown[]) => unknown)(runId, ...rest);
        },
      },
    });
    const echoed: unknown[] = [];
    const exec = new Executor({
      store: reading,
      sandbox,
      toolsets: new Map([
        [
          "first",
          defineToolset("first", {
            echo: async (n: unknown) => {
              echoed.push(n);
              return n;
            },
          }),
        ],
      ]),
      owner: "first-2",
      onEnded: (id) => results.set(id, id),
    });
    const startedOf = async (runId: string) =>
      (await store.readJournal(runId))[0] as RunStartedEntry;
    const whole = (started: RunStartedEntry) => firstActivationOf(started, { inClear: true });
    try {
      const script = await compileScript({ source: SIGNALLED, filename: "first.ts" });

      // As created: never read, one context, and its lease is this worker's first token.
      const fresh = await createRun(store, script, { toolset: "first", input: { n: 1 } });
      await exec.activate(fresh, false, { first: whole(await startedOf(fresh)) });
      await until(() => echoed.includes(1), 20_000, "the run's first call");
      expect(reads).toEqual([]);
      const lease = await store.acquireLease(fresh, "someone-else", 30_000);
      expect(lease).toBeUndefined(); // held, by the claim
      await store.addInbox(fresh, { kind: "signal", name: "go", payload: 10 });
      await exec.activate(fresh);
      await until(() => results.has(fresh), 20_000, "the claimed run to end");
      expect(reads).toEqual([]);
      expect((await store.readJournal(fresh)).at(-1)).toMatchObject({
        kind: "run.completed",
        result: 11,
      });

      // A signal came before the worker: the claim is refused, and the usual path reads the run
      // and delivers it. Its first call is made once.
      const signalled = await createRun(store, script, { toolset: "first", input: { n: 2 } });
      await store.addInbox(signalled, { kind: "signal", name: "go", payload: 20 });
      await exec.activate(signalled, false, { first: whole(await startedOf(signalled)) });
      await until(() => results.has(signalled), 20_000, "the signalled run to end");
      expect(reads).toEqual([signalled]);
      expect(echoed.filter((n) => n === 2)).toHaveLength(1);
      expect((await store.readJournal(signalled)).at(-1)).toMatchObject({ result: 22 });

      // Another worker took it first: refused, and left to that worker, nothing of it written.
      const taken = await createRun(store, script, { toolset: "first", input: { n: 3 } });
      const theirs = (await store.acquireLease(taken, "first-other", 30_000))!;
      await exec.activate(taken, false, { first: whole(await startedOf(taken)) });
      expect(await store.readJournal(taken)).toHaveLength(1);
      expect(echoed).not.toContain(3);
      expect(reads).toEqual([signalled, taken]);
      expect(
        await store.commit([{ lease: theirs, afterSeq: 1, entries: [], status: "running" }]),
      ).toEqual(["ok"]); // still theirs
      // A ring forged in Redis (another input): its commit is refused, and the run goes on with
      // the start it was stored with. The forged input never reaches a tool.
      const forged = await createRun(store, script, { toolset: "first", input: { n: 4 } });
      const real = await startedOf(forged);
      await exec.activate(forged, false, { first: whole({ ...real, input: { n: 666 } }) });
      await until(() => echoed.includes(4), 20_000, "the forged run's real first call");
      expect(echoed).not.toContain(666);
      expect(reads).toEqual([signalled, taken, forged]);
      await store.addInbox(forged, { kind: "signal", name: "go", payload: 40 });
      await exec.activate(forged);
      await until(() => results.has(forged), 20_000, "the forged run to end");
      expect((await store.readJournal(forged)).at(-1)).toMatchObject({ result: 44 });

      // Every context made let go: the ended runs' and the refused claims'.
      await until(() => sandbox.disposed.length === sandbox.made.length, 5_000, "contexts let go");
    } finally {
      await exec.close();
      sandbox.dispose();
    }
  }, 60_000);
});

describe("two workers rung with one new run's whole start", () => {
  it("let one claim it: each call is made once, and the run ends once", async () => {
    const calls: string[] = [];
    const ended: string[] = [];
    const toolsets = new Map([
      [
        "first",
        defineToolset("first", {
          echo: async (n: unknown, { callId }: { callId: string }) => {
            calls.push(callId);
            return n;
          },
        }),
      ],
    ]);
    const executors = ["first-a", "first-b"].map(
      (owner) =>
        new Executor({
          store,
          sandbox: new Sandbox(),
          toolsets,
          owner,
          onEnded: (id) => ended.push(id),
        }),
    );
    try {
      const script = await compileScript({ source: SOURCE, filename: "first.ts" });
      const runs: string[] = [];
      for (let i = 0; i < 5; i++) {
        const runId = await createRun(store, script, { toolset: "first", input: { n: i } });
        const started = (await store.readJournal(runId))[0] as RunStartedEntry;
        const first = firstActivationOf(started, { inClear: true });
        // A ring delivered twice, to two workers at once (a retried job, a stalled one).
        await Promise.all(executors.map((exec) => exec.activate(runId, false, { first })));
        runs.push(runId);
      }
      await until(() => ended.length >= runs.length, 20_000, "every run to end");
      expect(ended.sort()).toEqual([...runs].sort());
      expect(new Set(calls).size).toBe(calls.length); // no callId twice
      expect(calls).toHaveLength(runs.length);
      for (const runId of runs) {
        const journal = await store.readJournal(runId);
        expect(journal.filter((e) => e.kind === "call")).toHaveLength(1);
        expect(journal.at(-1)).toMatchObject({ kind: "run.completed" });
      }
    } finally {
      await Promise.all(executors.map((exec) => exec.close()));
    }
  }, 60_000);
});

/** Calls echo with its input, then waits for a signal and adds its payload. */
const SIGNALLED = `import { tools, waitForSignal } from "rewind";
export default async (input: { n: number }) => {
  const n = (await tools.echo(input.n)) as number;
  const more = (await waitForSignal("go")) as number;
  return n + more;
};`;
