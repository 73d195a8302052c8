/**
 * docs/durability.md, "A script that aborts its process": a heap overflow can abort the process
 * running the script (isolated-vm's memory limit is a guideline; one huge allocation makes V8
 * give up on the whole process). Issue 17:
 * that process is a supervised sandbox process, never the worker: the worker lives on, charges
 * the death to the run that was executing, and loads it again in a fresh sandbox process; past
 * the bound, the run is failed with CRASH_LOOP naming the cause, while the other runs go on.
 * Real processes, a real abort: no simulated crash.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileScript } from "@rewind/sandbox";
import { Cluster, pause, type ServiceProcess } from "./cluster-harness.js";

const cluster = new Cluster({ env: { REWIND_LEASE_MS: "2000", REWIND_STICKY_TIMEOUT_MS: "500" } });
beforeAll(() => cluster.start(), 60_000);
afterAll(() => cluster.close(), 30_000);

describe("a script that aborts the process running it", () => {
  it("is failed with CRASH_LOOP after five sandbox deaths; the worker lives, its other runs complete", async () => {
    const bomb = await compileScript({
      source: `export default async () => new Array(2 ** 28).fill(1.5).length; // 2 GiB at once`,
      filename: "bomb.ts",
    });
    const honest = await compileScript({
      source: `import { tools } from "rewind";
export default async () => {
  const a = await tools.lookup({ q: "a" });
  await new Promise((resolve) => setTimeout(resolve, 3000)); // alive across a crash or two
  return [a, await tools.lookup({ q: "b" })];
};`,
      filename: "honest.ts",
    });
    // A supervisor, as a deployment would be: a worker that died would be started again.
    let current: ServiceProcess = (await cluster.startWorker()).worker;
    const first = current;
    let deaths = 0;
    let supervising = true;
    const supervisor = (async () => {
      while (supervising) {
        if (!current.alive) {
          deaths++;
          current = (await cluster.startWorker()).worker;
        }
        await pause(100);
      }
    })();
    try {
      const others = [];
      for (let i = 0; i < 3; i++)
        others.push((await cluster.api.runs.start({ script: honest, toolset: "shop" })).id);
      const doomed = (await cluster.api.runs.start({ script: bomb, toolset: "shop" })).id;

      let result = await cluster.api.runs.result(doomed, "60s");
      if (result.status !== "failed") result = await cluster.api.runs.result(doomed, "60s");
      expect(result.status).toBe("failed");
      expect(result.error).toMatchObject({ code: "CRASH_LOOP" });
      expect(result.error?.message).toContain("without journaling any progress");
      expect(result.error?.message).toMatch(/its sandbox process (was killed|exited)/);
      // Its sandbox process died five times, each charged to it; the worker never did.
      expect(deaths).toBe(0);
      expect(first.alive).toBe(true);
      expect(first.log.split("is charged a death").length - 1).toBe(5);
      for (const id of others) {
        const other = await cluster.api.runs.result(id, "60s");
        expect(other.status, `${id}: ${JSON.stringify(other.error)}`).toBe("completed");
      }
    } finally {
      supervising = false;
      await supervisor;
    }
  }, 180_000);
});
