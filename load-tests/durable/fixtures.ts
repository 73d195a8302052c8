/** Scripts, the trivial toolset, and helpers to submit runs and drive them through an Executor. */
import { randomBytes } from "node:crypto";
import { newSeed, type Json, type RunStartedEntry } from "@rewind/core";
import { Executor } from "@rewind/executor";
import { Sandbox, compileScript, type CompiledScript, type SandboxOptions } from "@rewind/sandbox";
import { defineToolset } from "@rewind/sdk";
import type { RunStatus, Store } from "@rewind/store";

export const TOOLSET = "bench";

/** `n` sequential calls of a trivial tool. */
export const LOOP = `import { tools } from "rewind";
export default async function main(input: { n: number }) {
  let sum = 0;
  for (let i = 0; i < input.n; i++) sum += (await tools.noop({ i })) as number;
  return sum;
}`;

/** `n` sequential calls, then a wait for the signal "go": the run needs exactly one more event. */
export const LOOP_THEN_SIGNAL = `import { tools, waitForSignal } from "rewind";
export default async function main(input: { n: number }) {
  let sum = 0;
  for (let i = 0; i < input.n; i++) sum += (await tools.noop({ i })) as number;
  const go = await waitForSignal("go");
  return { sum, go };
}`;

/**
 * The trivial tool. `stamps` (when set) records the time of each invocation: the interval between
 * two invocations of one sequential run is one full tool-call round trip.
 */
export const probe: { stamps: bigint[] | undefined } = { stamps: undefined };
export const toolset = defineToolset(TOOLSET, {
  noop: (args: { i: number }): number => {
    probe.stamps?.push(process.hrtime.bigint());
    return args.i;
  },
});

export function compile(source: string, filename: string): Promise<CompiledScript> {
  return compileScript({ source, filename });
}

export const newRunId = (tag: string): string =>
  `run_bench_${tag}_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;

export function startedEntry(script: CompiledScript, input: Json, runId: string): RunStartedEntry {
  return {
    seq: 1,
    kind: "run.started",
    at: Date.now(),
    runId,
    scriptHash: script.hash,
    input,
    seed: newSeed(),
    epoch: 1,
    toolset: TOOLSET,
    namespace: "default",
  };
}

/** Stores the script and a new queued run, as the API does on POST /v1/runs. */
export async function submit(
  store: Store,
  script: CompiledScript,
  input: Json,
  tag: string,
): Promise<string> {
  await store.putScript("default", script);
  const runId = newRunId(tag);
  await store.createRun({ started: startedEntry(script, input, runId), ttlMs: 3_600_000 });
  return runId;
}

/** An Executor whose `ended(runId)` resolves when the run ends (its onEnded hook). */
export class LiveExecutor {
  readonly sandbox: Sandbox;
  readonly executor: Executor;
  private readonly waiters = new Map<string, (status: RunStatus) => void>();
  private readonly done = new Map<string, RunStatus>();
  readonly errors: unknown[] = [];

  constructor(store: Store, mode: SandboxOptions["mode"], owner: string, stealLeases = false) {
    this.sandbox = new Sandbox({ mode });
    this.executor = new Executor({
      store,
      sandbox: this.sandbox,
      toolsets: new Map([[TOOLSET, toolset]]),
      owner: `${owner}:${randomBytes(3).toString("hex")}`,
      stealLeases,
      onEnded: (runId, status) => {
        const waiter = this.waiters.get(runId);
        if (waiter === undefined) this.done.set(runId, status);
        else {
          this.waiters.delete(runId);
          waiter(status);
        }
      },
      onError: (_runId, error) => this.errors.push(error),
    });
  }

  /** Resolves with the run's final status; rejects after `timeoutMs`, or on an activation error. */
  ended(runId: string, timeoutMs = 60_000): Promise<RunStatus> {
    const status = this.done.get(runId);
    if (status !== undefined) {
      this.done.delete(runId);
      return Promise.resolve(status);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(runId);
        reject(new Error(`run ${runId} did not end in ${timeoutMs} ms: ${String(this.errors[0])}`));
      }, timeoutMs);
      this.waiters.set(runId, (s) => {
        clearTimeout(timer);
        resolve(s);
      });
    });
  }

  /** activate() and wait until the run has ended (onEnded); throws unless it completed. */
  async run(runId: string): Promise<void> {
    const ended = this.ended(runId);
    await this.executor.activate(runId);
    const status = await ended;
    if (status !== "completed") throw new Error(`run ${runId} ended ${status}`);
  }

  /**
   * Waits for the activations still queued for a run that has ended: each tool outcome rings the
   * doorbell once, and the activations it queues run after the run's end (one store round trip
   * each). activate() once more resolves when every earlier one has run. Not timed by callers, so
   * one measurement's leftovers never overlap the next one's.
   */
  async drain(runId: string): Promise<void> {
    await this.executor.activate(runId);
  }

  async close(): Promise<void> {
    await this.executor.close();
    this.sandbox.dispose();
  }
}
