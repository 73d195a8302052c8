/**
 * `rewind dev` as a user starts it, on whatever Node runs the tests (CI runs this file on Node 20,
 * 24 and 26): the platform comes up, serves the epoch of its own runtime, and a run submitted
 * with `rewind run --wait` completes in it.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { newRunEpoch } from "@rewind/sandbox";
import { devUrl } from "./dev-banner.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const bin = path.join(root, "libs/cli/bin/rewind.mjs");
const examples = path.join(root, "examples");
let dir = "";
let dev: ChildProcess | undefined;
let url = "";

beforeAll(async () => {
  if (!existsSync(path.join(root, "libs/cli/dist/main.js")))
    throw new Error("the CLI is not built: run `npm run build` first (npm test does)");
  dir = mkdtempSync(path.join(tmpdir(), "rewind-dev-smoke-"));
  const { DATABASE_URL: _d, REDIS_URL: _r, ...env } = process.env;
  dev = spawn(process.execPath, [bin, "dev", "--port", "0", "--toolset", `${examples}/tools.ts`], {
    cwd: dir,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  url = await devUrl(dev);
}, 60_000);

afterAll(async () => {
  if (dev !== undefined && dev.exitCode === null) {
    const exited = new Promise((resolve) => dev!.once("exit", resolve));
    dev.kill("SIGTERM");
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

function rewind(...args: string[]) {
  const result = spawnSync(process.execPath, [bin, ...args], {
    cwd: dir,
    env: { ...process.env, REWIND_URL: url },
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

it("runs a script to completion in the epoch of this Node's runtime", () => {
  const epochs = rewind("epochs", "--json");
  expect(epochs.code, epochs.stderr).toBe(0);
  const list = JSON.parse(epochs.stdout) as {
    current: number;
    epochs: { epoch: number; workers: number }[];
  };
  expect(list.current).toBe(newRunEpoch());
  expect(list.epochs.find((e) => e.epoch === list.current)?.workers).toBe(1);

  const run = rewind(
    "run",
    `${examples}/hello.ts`,
    "--toolset",
    "shop",
    "--input",
    '{"name":"ada"}',
    "--wait",
  );
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain("hello, ada");
  const id = /run_[A-Za-z0-9_]+/.exec(run.stdout + run.stderr)?.[0];
  expect(id).toBeDefined();
  const show = rewind("runs", "show", id!, "--json");
  expect(JSON.parse(show.stdout)).toMatchObject({ status: "completed", epoch: newRunEpoch() });
});
