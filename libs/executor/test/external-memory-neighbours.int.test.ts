/**
 * Issue 17, the neighbours: the memory a run holds outside its heap (WebAssembly memories) is
 * charged to the run that grew it, not to whichever run the process's total happens to pass the
 * limit under. Before, 8 runs in one sandbox process each holding a 119 MiB memory (each under
 * the 128 MiB limit) had 4 of them fail with MEMORY_LIMIT "held about 237 MiB". Real sandbox
 * processes, on the runtime's default epoch (its guest lets a memory reach the run's limit).
 */
import { afterAll, describe, expect, it } from "vitest";
import { newSeed } from "@rewind/core";
import { SandboxProcesses } from "@rewind/executor";
import { compileScript } from "@rewind/sandbox";

const LIMIT_MB = 64;
const pool = new SandboxProcesses({ sandbox: { memoryLimitMb: LIMIT_MB, cpuLimitMs: 20_000 } });
afterAll(() => pool.dispose());

/**
 * A script that holds a WebAssembly.Memory of `mib` MiB with every page touched, waits on a tool
 * call (holding it across activations) and, answered, makes another of `more` MiB (one memory
 * may not outgrow the limit, several may).
 */
const holder = (mib: number, more = 0) => `import { tools } from "rewind";
const held: WebAssembly.Memory[] = [];
function hold(mib: number) {
  const memory = new WebAssembly.Memory({ initial: mib * 16 });
  const bytes = new Uint8Array(memory.buffer);
  for (let i = 0; i < bytes.length; i += 4096) bytes[i] = 1;
  held.push(memory);
}
export default async function main() {
  hold(${mib});
  await tools.wait({});
  if (${more} > 0) hold(${more});
  return held.reduce((sum, memory) => sum + memory.buffer.byteLength, 0);
}`;

async function instance(source: string, runId: string) {
  const script = await compileScript({ source, filename: `${runId}.ts` });
  return pool.instantiate(script, { seed: newSeed(), startAt: 0, runId });
}

describe("WebAssembly memory of neighbours in one sandbox process", () => {
  it("charges each run only its own memory: runs under the limit all complete", async () => {
    const mib = LIMIT_MB - 8;
    const runs = [];
    for (let i = 0; i < 6; i++) {
      const run = await instance(holder(mib), `n${i}`);
      expect(await run.start(null), `run n${i} started`).toMatchObject([
        { type: "call", name: "wait" },
      ]);
      runs.push(run);
    }
    expect(new Set(pool.pids).size, "one sandbox process").toBe(1);
    for (const [i, run] of runs.entries()) {
      const commands = await run.deliver({ type: "call.result", id: 1, at: 1, result: null });
      expect(commands, `run n${i} answered`).toMatchObject([
        { type: "complete", result: mib * 1024 * 1024 },
      ]);
    }
    // Only now: a run that leaves much memory behind has its isolate disposed, evicting the rest.
    for (const run of runs) run.dispose();
  }, 120_000);

  it("still fails the run that grows past its own limit, naming its own figure", async () => {
    const quiet = await instance(holder(LIMIT_MB - 8), "quiet");
    expect(await quiet.start(null)).toMatchObject([{ type: "call", name: "wait" }]);
    const greedy = await instance(holder(LIMIT_MB / 2, LIMIT_MB), "greedy");
    expect(await greedy.start(null)).toMatchObject([{ type: "call", name: "wait" }]);
    const commands = await greedy.deliver({ type: "call.result", id: 1, at: 1, result: null });
    expect(commands).toMatchObject([{ type: "fail", error: { code: "MEMORY_LIMIT" } }]);
    const [fail] = commands as unknown as [{ error: { message: string } }];
    // Its own memory (about 96 MiB), not the process's (about 152 MiB with the quiet run's).
    const held = Number(/held about (\d+) MiB/.exec(fail.error.message)?.[1]);
    expect(held, fail.error.message).toBeGreaterThan(LIMIT_MB);
    expect(held, fail.error.message).toBeLessThan(LIMIT_MB * 1.5 + 8);
    greedy.dispose();
    quiet.dispose();
  }, 120_000);
});
