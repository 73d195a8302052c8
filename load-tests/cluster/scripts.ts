/** The scripts the workloads run (compiled once; runs are then submitted by the script's hash). */
import { createHash } from "node:crypto";
import { compileScript } from "@rewind/sandbox";
import type { StartRun } from "@rewind/sdk";

export const TOOLSET = "bench";

/** W1: `n` sequential calls of the trivial tool. */
export const CALLS = `import { tools } from "rewind";
export default async function main(input: { n: number }) {
  let sum = 0;
  for (let i = 0; i < input.n; i++) sum += (await tools.noop({ i })) as number;
  return sum;
}`;

/** The stream's workload: `n` calls that each take `ms`, so its commits come one at a time. */
export const PAUSES = `import { tools } from "rewind";
export default async function main(input: { n: number; ms: number }) {
  for (let i = 0; i < input.n; i++) await tools.pause({ ms: input.ms });
  return input.n;
}`;

/** W2: `calls` calls with a durable sleep of `sleep` between each two. */
export const SLEEPY = `import { tools, sleep } from "rewind";
export default async function main(input: { calls: number; sleep: string }) {
  let sum = 0;
  for (let i = 0; i < input.calls; i++) {
    if (i > 0) await sleep(input.sleep);
    sum += (await tools.noop({ i })) as number;
  }
  return sum;
}`;

/**
 * W3: `n` calls, then each signal "poke" makes one more call, until a poke says "stop". A poke
 * is one activation of the run: hot when its sandbox is alive, cold (replayed) when it is not.
 */
export const LONG = `import { tools, waitForSignal } from "rewind";
export default async function main(input: { n: number }) {
  let sum = 0;
  for (let i = 0; i < input.n; i++) sum += (await tools.noop({ i })) as number;
  for (let poke = 0; ; poke++) {
    const said = await waitForSignal<string>("poke");
    if (said === "stop") return { sum, pokes: poke };
    sum += (await tools.noop({ i: poke })) as number;
  }
}`;

/** W4: waits idle for the signal "go", then ends. */
export const IDLE = `import { waitForSignal } from "rewind";
export default async function main(input: { i: number }) {
  const go = await waitForSignal<number>("go");
  return { i: input.i, go };
}`;

export type Script = Extract<StartRun["script"], { code: string }>;

export async function compile(source: string, filename: string): Promise<Script> {
  const { entry, code, sourceMap } = await compileScript({ source, filename });
  return { entry, code, sourceMap };
}

/** The script's id as the API computes it: runs after the first can name it by hash. */
export function hashOf(script: Script): { hash: string } {
  return { hash: `sha256:${createHash("sha256").update(script.code).digest("hex")}` };
}
