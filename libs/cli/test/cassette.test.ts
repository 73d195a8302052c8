import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevPlatform, type DevPlatform } from "@rewind/dev";
import { compileScript } from "@rewind/sandbox";
import { Rewind } from "@rewind/sdk";
import tools from "../../../examples/tools.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const cli = path.join(root, "libs/cli/dist/main.js");
const examples = path.join(root, "examples");
let dir: string;
let platform: DevPlatform;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "rewind-cassette-cli-"));
  platform = await startDevPlatform({
    port: 0,
    dataDir: path.join(dir, ".rewind"),
    toolsets: [tools],
  });
}, 60_000);
afterAll(async () => {
  await platform.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The CLI as a child process; asynchronously, since this process serves its requests. */
const rewind = (...args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [cli, ...args],
      {
        cwd: dir,
        timeout: 60_000,
        env: { ...process.env, REWIND_URL: platform.url, REWIND_TOKEN: platform.token },
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });

describe("rewind cassette and rewind test", () => {
  it("exports a real run as a cassette, and tests the script (and a changed one) against it", async () => {
    const api = new Rewind({ url: platform.url, token: platform.token });
    const agent = await compileScript({ file: path.join(examples, "agent.ts") });
    const { id } = await api.runs.start({ script: agent, input: { goal: "g" }, toolset: "shop" });
    const real = await api.runs.result(id, "20s");

    const file = path.join(dir, "agent.cassette.jsonl");
    expect((await rewind("cassette", id, "-o", file)).code).toBe(0);
    expect(JSON.parse(readFileSync(file, "utf8").split("\n")[0]!)).toMatchObject({
      kind: "run.started",
      scriptHash: agent.hash,
    });

    const passing = await rewind("test", path.join(examples, "agent.ts"), "--cassette", file);
    expect(passing.stderr).toContain("passes against");
    expect(passing.code).toBe(0);
    expect(passing.stdout.trim().split("\n").at(-1)).toBe(JSON.stringify(real.result));

    const changed = path.join(dir, "agent-changed.ts");
    writeFileSync(
      changed,
      readFileSync(path.join(examples, "agent.ts"), "utf8").replace(
        "{ step, notes }",
        "{ step: step + 1, notes }",
      ),
    );
    const failing = await rewind("test", changed, "--cassette", file);
    expect(failing.code).toBe(1);
    expect(failing.stderr).toMatch(
      /tools\.think\(.*step: 2.*\) is not in the cassette; the nearest recorded call is tools\.think\(/,
    );
  });
});
