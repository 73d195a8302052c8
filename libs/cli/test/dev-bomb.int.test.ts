/**
 * Issue 17: a script that calls a tool and then allocates far past the memory limit aborted
 * `rewind dev` (V8 heap OOM) on every start, before its API listened. Now scripts run in a
 * supervised sandbox process: the bomb aborts that process only, its death is charged to the
 * bomb, and past the bound the bomb is failed with CRASH_LOOP naming the cause. The ten honest
 * runs sharing its process complete, and the API answers all along. Real processes, a real abort.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { compileScript } from "@rewind/sandbox";
import { Rewind } from "@rewind/sdk";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const cli = path.join(root, "libs/cli/dist/main.js");
const fixtures = fileURLToPath(new URL("fixtures/", import.meta.url));

let dir: string;
let dev: ChildProcess | undefined;
let out = "";

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "rewind-bomb-"));
  symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"));
});
afterAll(() => {
  dev?.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

async function startDev(): Promise<Rewind> {
  dev = spawn(
    process.execPath,
    [cli, "dev", "--port", "0", "--toolset", path.join(fixtures, "counting-tools.ts")],
    { cwd: dir, env: { ...process.env, DATABASE_URL: "" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  dev.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  dev.stderr!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const deadline = Date.now() + 120_000; // the first start initialises PGlite
  for (;;) {
    const match = /API\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
    if (match) return new Rewind({ url: match[1]!, token: /token\s+(\S+)/.exec(out)![1]! });
    if (Date.now() > deadline || dev.exitCode !== null)
      throw new Error(`rewind dev did not start:\n${out}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

it("fails the bomb alone, completes the ten beside it, and keeps serving", async () => {
  const api = await startDev();
  const bomb = await compileScript({
    source: `import { tools } from "rewind";
export default async () => { await tools.lookup({ q: "x" }); return new Array(1e9).fill(0).length; };`,
    filename: "bomb.ts",
  });
  const honest = await compileScript({
    source: `import { tools } from "rewind";
export default async (input: { i: number }) => {
  let total = 0;
  for (let step = 0; step < 5; step++) {
    total += (await tools.lookup({ q: "honest".repeat(input.i + 1) })).answer;
    await new Promise((resolve) => setTimeout(resolve, 500)); // alive across the bomb's deaths
  }
  return total;
};`,
    filename: "honest.ts",
  });
  const ten: string[] = [];
  for (let i = 0; i < 10; i++)
    ten.push((await api.runs.start({ script: honest, input: { i }, toolset: "shop" })).id);
  const doomed = (await api.runs.start({ script: bomb, toolset: "shop" })).id;

  // The API answers all along: a request every 200 ms, each within a second.
  let answered = 0;
  let slowest = 0;
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const started = performance.now();
      await api.runs.get(doomed);
      slowest = Math.max(slowest, performance.now() - started);
      answered++;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  try {
    let result = await api.runs.result(doomed, "60s");
    for (let i = 0; i < 3 && result.status !== "failed"; i++)
      result = await api.runs.result(doomed, "60s");
    expect(result.status).toBe("failed");
    expect(result.error).toMatchObject({ code: "CRASH_LOOP" });
    expect(result.error?.message).toMatch(/started 5 times in a row/);
    expect(result.error?.message).toMatch(/its sandbox process (was killed|exited)/);
    for (const [i, id] of ten.entries()) {
      const run = await api.runs.result(id, "60s");
      expect(run.status, `${id}: ${JSON.stringify(run.error)}`).toBe("completed");
      expect(run.result).toBe(5 * 6 * (i + 1));
    }
  } finally {
    polling = false;
    await poller;
  }
  expect(dev!.exitCode, out).toBeNull(); // never went down
  expect(out.split("is charged a death").length - 1).toBe(5);
  expect(answered).toBeGreaterThan(10);
  expect(slowest).toBeLessThan(1000);
  console.log(
    `API answered ${answered} requests during the bomb, slowest ${slowest.toFixed(0)} ms`,
  );
}, 300_000);
