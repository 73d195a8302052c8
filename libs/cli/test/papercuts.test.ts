/**
 * What a new user meets first at the terminal: the version, a port in use, the runs list's
 * header, what a waiting run waits for, where the client commands connect.
 */
import { execFile, spawn } from "node:child_process";
import { createServer, type Server } from "node:net";
import type { AddressInfo } from "node:net";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineToolset } from "@rewind/core";
import { compileScript } from "@rewind/sandbox";
import { usePlatform } from "./platform-harness.js";

const run = promisify(execFile);
const h = usePlatform([defineToolset("clock", { now: async () => ({ ok: true }) })]);

async function rewind(args: string[], env: NodeJS.ProcessEnv = {}) {
  try {
    const { stdout, stderr } = await run(process.execPath, [h.cli, ...args], {
      cwd: h.dir,
      env: { ...process.env, ...env },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; killed?: boolean; stdout: string; stderr: string };
    return {
      code: failed.killed ? "killed" : failed.code,
      stdout: failed.stdout,
      stderr: failed.stderr,
    };
  }
}

describe("rewind's papercuts", () => {
  let holder: Server;
  let taken: number;
  beforeAll(async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    taken = (holder.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => holder.close(resolve)));

  it("prints its version", async () => {
    const { version } = JSON.parse(
      readFileSync(new URL("../package.json", import.meta.url), "utf8"),
    ) as { version: string };
    for (const flag of ["--version", "-v"]) {
      expect((await rewind([flag])).stdout.trim()).toBe(version);
    }
  });

  it.each([["dev"], ["api"]])(
    "rewind %s on a port in use names the port and exits non-zero at once",
    async (command) => {
      const began = Date.now();
      const result = await rewind([command, "--port", String(taken)], {
        DATABASE_URL: "postgres://nobody@127.0.0.1:1/none", // never reached: the port comes first
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`Port ${taken} on 127.0.0.1 is already in use`);
      expect(result.stderr).toContain("--port 0");
      expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(Date.now() - began).toBeLessThan(15_000);
    },
  );

  it("refuses a --port that is not a port", async () => {
    const result = await rewind(["api", "--port", "http"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("--port must be an integer from 0 to 65535");
  });

  it("lists runs under a header, with their script", async () => {
    const script = await compileScript({
      source: `import { tools } from "rewind"; export default async () => tools.now();`,
      filename: "now.ts",
    });
    const { id } = await h.api.runs.start({ script, toolset: "clock" });
    await h.api.runs.result(id, "20s");
    const { code, stdout } = await rewind(["runs", "list"], h.env);
    expect(code).toBe(0);
    const [header, ...rows] = stdout.trimEnd().split("\n");
    expect(header).toMatch(/^RUN\s+STATUS\s+TOOLSET\s+SCRIPT\s+CREATED$/);
    // The script by its file name, not its hash.
    expect(rows.find((row) => row.startsWith(id))).toMatch(
      new RegExp(`^${id}\\s+completed\\s+clock\\s+now\\.ts\\s+\\d{4}-`),
    );
    const filtered = await rewind(
      ["runs", "list", "--script", "now.ts", "--status", "completed,failed"],
      h.env,
    );
    expect(filtered.stdout.trimEnd().split("\n").slice(1)).toEqual([
      expect.stringMatching(new RegExp(`^${id}\\s`)),
    ]);
  });

  it("says what a waiting run waits for", async () => {
    const script = await compileScript({
      source: `import { sleep, waitForSignal } from "rewind";
export default async () => {
  await waitForSignal("go");
  await sleep("3d");
};`,
      filename: "waits.ts",
    });
    const { id } = await h.api.runs.start({ script, toolset: "clock" });
    const shown = async () => (await rewind(["runs", "show", id], h.env)).stdout;
    await expect.poll(shown, { timeout: 20_000 }).toMatch(/status\s+waiting/);
    expect(await shown()).toMatch(/waiting\s+for a signal .*rewind signal/);
    // The script by its file, then its hash.
    expect(await shown()).toMatch(/script\s+waits\.ts sha256:[0-9a-f]{64}\n/);
    await h.api.runs.signal(id, "go", null);
    await expect
      .poll(shown, { timeout: 20_000 })
      .toMatch(/waiting\s+for timer due 20\d\d-\S+ \(seq \d+ at waits\.ts:4:\d+\)/);
    await h.api.runs.cancel(id);
  });

  it("run --wait says what a run waits for instead of blocking silently", async () => {
    writeFileSync(
      path.join(h.dir, "waits-for-go.ts"),
      `import { waitForSignal } from "rewind";
export default async () => ({ got: await waitForSignal("go") });`,
    );
    const child = spawn(
      process.execPath,
      [h.cli, "run", "waits-for-go.ts", "--toolset", "clock", "--wait"],
      {
        cwd: h.dir,
        env: h.env,
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    await expect.poll(() => stderr, { timeout: 30_000 }).toMatch(/is waiting for a signal/);
    const id = stdout.trim().split("\n")[0]!;
    await h.api.runs.signal(id, "go", 7);
    expect(await exited).toBe(0);
    expect(stdout).toContain('{"got":7}');
  });

  it("points a run not found to rewind runs list", async () => {
    const result = await rewind(["runs", "show", "run_01nonexistent0000000000000"], h.env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("rewind runs list");
    expect(result.stderr).not.toContain("GET /v1/runs");
  });

  it("says in each client command's help where it connects", async () => {
    for (const args of [
      ["run", "--help"],
      ["runs", "list", "--help"],
      ["signal", "--help"],
    ]) {
      const { stdout } = await rewind(args);
      expect(stdout).toContain("REWIND_URL");
      expect(stdout).toContain("REWIND_TOKEN");
    }
  });

  it("takes --tools for --toolset and --toolset for exec's --tools", async () => {
    const { stdout, stderr, code } = await rewind([
      "exec",
      "/nonexistent/script.ts",
      "--toolset",
      "/nonexistent/tools.ts",
    ]);
    expect(code).toBe(1);
    expect(stdout + stderr).toContain("/nonexistent/tools.ts"); // read as exec's --tools
  });
});
