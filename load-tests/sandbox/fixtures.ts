/** The scripts the benchmarks run, and the run.started entries that begin their journals. */
import { newSeed, type Json, type RunStartedEntry } from "@rewind/core";
import { compileScript, type CompiledScript } from "@rewind/sandbox";
import { defineToolset } from "@rewind/sdk";

export const START = Date.UTC(2025, 0, 1);

/** `n` sequential calls of a trivial tool. */
export const LOOP = `import { tools } from "rewind";
export default async function main(input: { n: number }) {
  let sum = 0;
  for (let i = 0; i < input.n; i++) sum += (await tools.noop({ i })) as number;
  return sum;
}`;

/** One call: a small script for the start-up figure. */
export const SMALL = `import { tools } from "rewind";
export default async function main(input: { i: number }) {
  return await tools.noop({ i: input.i });
}`;

/** Idles until the signal "go". */
export const IDLE = `import { waitForSignal } from "rewind";
export default async function main(input: { i: number }) {
  const payload = await waitForSignal("go");
  return { i: input.i, payload };
}`;

/** The trivial tool, synchronous. */
export const noop = (args: { i: number }): number => args.i;
export const toolset = defineToolset("bench", { noop });

export function compile(source: string, filename: string): Promise<CompiledScript> {
  return compileScript({ source, filename });
}

export function startedEntry(script: CompiledScript, input: Json, runId: string): RunStartedEntry {
  return {
    seq: 1,
    kind: "run.started",
    at: START,
    runId,
    scriptHash: script.hash,
    input,
    seed: newSeed(),
    epoch: 1,
    toolset: toolset.name,
    namespace: "default",
  };
}
