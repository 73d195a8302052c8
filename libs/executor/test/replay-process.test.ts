import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineToolset, type JournalEntry } from "@rewind/core";
import { ReplayProcess, runInProcess } from "@rewind/executor";
import { Sandbox, compileScript, type CompiledScript } from "@rewind/sandbox";

/*
 * The API's replay checks run in a child process. A script whose one allocation is far over the
 * sandbox's memory limit makes V8 abort the process it runs in (isolated-vm cannot stop it): the
 * child dies, the check fails saying so, and this process (the API) goes on checking.
 */
const sandbox = new Sandbox();
const replays = new ReplayProcess({ threads: 1 });
afterAll(async () => {
  sandbox.dispose();
  await replays.close();
});

const toolset = defineToolset("bomb", { size: async () => 2 ** 28 });
const source = (allocate: boolean) => `import { tools } from "rewind";
export default async function main() {
  const n = (await tools.size({})) as number;
  ${allocate ? "return new Array(n).fill(1.5).length; // 2 GiB in one allocation" : "return n;"}
}`;

let honest: CompiledScript;
let bomb: CompiledScript;
let journal: readonly JournalEntry[];
beforeAll(async () => {
  honest = await compileScript({ source: source(false), filename: "size.ts" });
  bomb = await compileScript({ source: source(true), filename: "size.ts" });
  // Recorded by the honest version: the bomb's replay gets past the call, then allocates.
  journal = (await runInProcess({ script: honest, sandbox, toolset, input: null })).journal;
}, 30_000);

describe("ReplayProcess", () => {
  it("answers as checks on this thread do", async () => {
    expect(await replays.check(honest, journal)).toMatchObject({ matches: true });
  });

  it("survives a script that aborts the process re-executing it, and says what happened", async () => {
    const before = process.pid;
    await expect(replays.check(bomb, journal)).rejects.toMatchObject({
      code: "SANDBOX_ERROR",
      message: expect.stringMatching(/process re-executing the script .* memory limit/),
    });
    expect(process.pid).toBe(before);
    // A new child takes the next check.
    expect(await replays.check(honest, journal)).toMatchObject({ matches: true });
  }, 60_000);

  it("refuses checks once closed", async () => {
    const closing = new ReplayProcess({ threads: 1 });
    expect(await closing.check(honest, journal)).toMatchObject({ matches: true });
    await closing.close();
    await expect(closing.check(honest, journal)).rejects.toMatchObject({ code: "UNAVAILABLE" });
  });
});
