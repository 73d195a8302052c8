/**
 * Runs a probe expression in a fresh run of one epoch's guest runtime and answers its value, for
 * the tests of what scripts observe. The expression may `await`.
 */
import { EPOCHS, currentEnvironment, runtimeMismatches } from "../src/epochs.js";
import { compileScript } from "../src/compiler.js";
import { Sandbox } from "../src/host.js";

export const SEED = "00".repeat(32);
export const START_AT = Date.UTC(2025, 0, 1, 12, 30);

/** The standard-JavaScript epoch this runtime serves (2 on Node 20, 3 on 24, 4 on 26). */
export const STANDARD_EPOCH =
  EPOCHS.find((e) => e.epoch > 1 && runtimeMismatches(e, currentEnvironment()).length === 0)
    ?.epoch ?? 2;

export const NODE_MAJOR = Number(process.versions.node.split(".")[0]);

export async function probe(sandbox: Sandbox, epoch: number, expression: string): Promise<unknown> {
  const script = await compileScript({
    filename: "probe.ts",
    source: `export default async function main() { return JSON.stringify(await (async () => (${expression}))()); }`,
  });
  const instance = await sandbox.instantiate(script, { seed: SEED, startAt: START_AT, epoch });
  try {
    const commands = await instance.start(null);
    const done = commands.at(-1) as { type: string; result?: unknown } | undefined;
    if (done?.type !== "complete")
      throw new Error(`The probe ${expression} did not complete: ${JSON.stringify(done)}`);
    return JSON.parse(done.result as string) as unknown;
  } finally {
    instance.dispose();
  }
}
