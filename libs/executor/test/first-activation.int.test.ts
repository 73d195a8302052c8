/**
 * A new run's first ring carries its script, seed and clock (FirstActivation): the worker makes
 * the sandbox context while it takes the lease and reads the journal (issue 18's start hops). A
 * hint only: the context is used when the journal holds exactly that run's start, and otherwise
 * let go, the run replayed as if no hint had come.
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
});
