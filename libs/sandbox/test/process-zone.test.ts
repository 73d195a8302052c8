/**
 * The sandbox has no process-wide side effects: importing it leaves the host's TZ and local time
 * as they were (it used to set TZ=UTC on import, changing local time for every tool in the worker
 * and the API). Epoch 1 still needs its process at UTC, set by the launcher: an epoch-1 run in a
 * process elsewhere refuses to start, saying what to set; the standard epochs pin their own zone.
 * Each case runs in a child process of its own, with the host environment it names (the test
 * runner's own process has TZ=UTC).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const VITE_NODE = path.join(REPO, "node_modules/vite-node/vite-node.mjs");
const dir = mkdtempSync(path.join(os.tmpdir(), "rewind-zone-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `body` (after importing the sandbox) in a child with `env`; returns what it printed. */
function inChild(body: string, env: Record<string, string>): Record<string, unknown> {
  const file = path.join(dir, `child-${Math.random().toString(36).slice(2)}.mjs`);
  const sandbox = path.join(REPO, "libs/sandbox/src/index.ts");
  writeFileSync(
    file,
    `const { Sandbox, compileScript } = await import(${JSON.stringify(sandbox)});\n` +
      `const out = {};\n${body}\nconsole.log(JSON.stringify(out));\n`,
  );
  const { TZ: _tz, ...rest } = process.env;
  const stdout = execFileSync(process.execPath, [VITE_NODE, "--config", "vitest.config.ts", file], {
    cwd: REPO,
    env: { ...rest, ...env },
    encoding: "utf8",
  });
  const line = stdout.split("\n").find((l) => l.startsWith("{"));
  return JSON.parse(line ?? "{}") as Record<string, unknown>;
}

describe("the sandbox and its host process's time zone", () => {
  it("leaves the host's TZ and local time alone when imported", () => {
    const out = inChild(
      `out.tz = process.env.TZ; out.offset = new Date(2024, 0, 1).getTimezoneOffset();`,
      { TZ: "Europe/Berlin" },
    );
    expect(out).toEqual({ tz: "Europe/Berlin", offset: -60 });
  });

  it("refuses to start an epoch-1 run in a process that is not at UTC, saying what to set", () => {
    const out = inChild(
      `const sb = new Sandbox();
       const script = await compileScript({ filename: "main.ts", source: "export default async () => 1" });
       try { await sb.instantiate(script, { seed: "00".repeat(32), startAt: 0, epoch: 1 }); out.made = true; }
       catch (e) { out.code = e.code; out.message = e.message; }
       sb.dispose();`,
      { TZ: "Europe/London" },
    );
    expect(out.code).toBe("SANDBOX_ERROR");
    expect(out.message).toMatch(/Europe\/London.*Start the process with TZ=UTC/);
  });

  it("runs a standard epoch's scripts at UTC in a process at any zone", () => {
    const out = inChild(
      `const sb = new Sandbox();
       const script = await compileScript({ filename: "main.ts", source: "export default async () => new Date(2024, 0, 1).toISOString()" });
       const run = await sb.instantiate(script, { seed: "00".repeat(32), startAt: 0, epoch: 2 });
       out.commands = await run.start(null);
       sb.dispose();`,
      { TZ: "Europe/London" },
    );
    expect(out.commands).toEqual([{ type: "complete", result: "2024-01-01T00:00:00.000Z" }]);
  });

  it("runs scripts at UTC in a process its launcher started with TZ=UTC", () => {
    const out = inChild(
      `const sb = new Sandbox();
       const script = await compileScript({ filename: "main.ts", source: "export default async () => new Date(2024, 0, 1).toISOString()" });
       const run = await sb.instantiate(script, { seed: "00".repeat(32), startAt: 0, epoch: 1 });
       out.commands = await run.start(null);`,
      { TZ: "UTC" },
    );
    expect(out.commands).toEqual([{ type: "complete", result: "2024-01-01T00:00:00.000Z" }]);
  });
});
