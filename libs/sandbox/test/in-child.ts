/**
 * Runs a module body in a child Node process with a host environment and flags of its own (the
 * test runner's process has TZ=UTC and no --no-node-snapshot), through vite-node so that it
 * imports the TypeScript sources. The body sets `out`; the child prints it as JSON.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const VITE_NODE = path.join(REPO, "node_modules/vite-node/vite-node.mjs");

/** An import specifier for a file of the sandbox package, from its path under libs/sandbox/. */
export const sandboxFile = (file: string) => JSON.stringify(path.join(REPO, "libs/sandbox", file));

export function inChild(
  body: string,
  options: { env?: Record<string, string>; nodeFlags?: string[] } = {},
): unknown {
  const dir = mkdtempSync(path.join(os.tmpdir(), "rewind-child-"));
  try {
    const file = path.join(dir, "child.mjs");
    writeFileSync(
      file,
      `const out = {};\n${body}\nconsole.log("RESULT " + JSON.stringify(out.value));\n`,
    );
    const { TZ: _tz, LANG: _lang, LC_ALL: _all, ...rest } = process.env;
    const stdout = execFileSync(
      process.execPath,
      [...(options.nodeFlags ?? []), VITE_NODE, "--config", "vitest.config.ts", file],
      { cwd: REPO, env: { ...rest, ...options.env }, encoding: "utf8" },
    );
    const line = stdout.split("\n").find((l) => l.startsWith("RESULT "));
    if (line === undefined) throw new Error(`The child printed no result: ${stdout}`);
    return JSON.parse(line.slice("RESULT ".length)) as unknown;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
