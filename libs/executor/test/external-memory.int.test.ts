/**
 * Issue 17: WebAssembly memory escapes the memory limit. A touched `WebAssembly.Memory` lives
 * outside the isolate's heap, where isolated-vm's limit never looks: three runs of 1 GiB each took
 * `rewind dev` from 400 MB to 2.4 GB, and a cancel freed none of it. In a sandbox process the host
 * holds that memory to the run's limit too (MEMORY_LIMIT, naming it), and a run's end frees it.
 * Real sandbox processes; their resident size read from /proc.
 */
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { newSeed } from "@rewind/core";
import { SandboxProcesses } from "@rewind/executor";
import { compileScript, epochSupport } from "@rewind/sandbox";

const MIB = 1024 * 1024;
const pool = new SandboxProcesses({ sandbox: { memoryLimitMb: 128, cpuLimitMs: 20_000 } });
afterAll(() => pool.dispose());

/** A script that holds a WebAssembly.Memory of `mib` MiB with every page touched. */
const holder = (mib: number) => `import { tools } from "rewind";
export default async function main() {
  const memory = new WebAssembly.Memory({ initial: ${mib * 16} });
  const bytes = new Uint8Array(memory.buffer);
  for (let i = 0; i < bytes.length; i += 4096) bytes[i] = 1;
  await tools.wait({});
  return bytes.length;
}`;

function residentBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+) kB/m);
  return Number(line![1]) * 1024;
}

/**
 * Epoch 1's runs: their guest lets a script make a 1 GiB memory, so the host's guard is what holds
 * it (the standard epochs' guest refuses one over the isolate's limit before it exists,
 * libs/sandbox/test/webassembly.test.ts). Epoch 1 is Node 20's: elsewhere there is none to hold.
 */
const EPOCH = 1;
const served = epochSupport().epochs.includes(EPOCH);

async function instance(source: string, runId: string) {
  const script = await compileScript({ source, filename: `${runId}.ts` });
  return pool.instantiate(script, { seed: newSeed(), startAt: 0, runId, epoch: EPOCH });
}

describe.skipIf(!served)("WebAssembly memory in a sandbox process (epoch 1)", () => {
  it("fails a run holding more than its memory limit with MEMORY_LIMIT, and frees it", async () => {
    const warm = await instance("export default async () => 1;", "warm");
    await warm.start(null);
    warm.dispose();
    const pid = pool.pids[0]!;
    const before = residentBytes(pid);
    const outcomes = [];
    for (const i of [1, 2, 3]) {
      const run = await instance(holder(1024), `big${i}`);
      outcomes.push(await run.start(null));
      run.dispose();
    }
    for (const commands of outcomes) {
      expect(commands).toMatchObject([{ type: "fail", error: { code: "MEMORY_LIMIT" } }]);
      const [fail] = commands as unknown as [{ error: { message: string } }];
      expect(fail.error.message).toMatch(/outside the JavaScript heap \(WebAssembly memories\)/);
    }
    // Each run's isolate went with its failure: the process is back where it was.
    const after = residentBytes(pool.pids[0]!);
    expect(pool.pids[0], "the sandbox process itself carried on").toBe(pid);
    expect(
      after - before,
      `resident ${Math.round(before / MIB)} → ${Math.round(after / MIB)} MiB`,
    ).toBeLessThan(96 * MIB);
  }, 120_000);

  it("frees a run's memory under the limit when the run is disposed (a cancel)", async () => {
    const run = await instance(holder(96), "held");
    const commands = await run.start(null);
    expect(commands).toMatchObject([{ type: "call", name: "wait" }]);
    const pid = pool.pids[0]!;
    const holding = residentBytes(pid);
    run.dispose();
    // The dispose is a message: an instantiate after it is answered once it was handled.
    const probe = await instance("export default async () => 1;", "probe");
    await probe.start(null);
    probe.dispose();
    const freed = residentBytes(pid);
    expect(
      holding - freed,
      `resident ${Math.round(holding / MIB)} → ${Math.round(freed / MIB)} MiB`,
    ).toBeGreaterThan(64 * MIB);
  }, 120_000);
});
