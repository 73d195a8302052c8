/**
 * Two processes on one embedded database folder: the second is refused with what to do, and a
 * folder whose owner died (kill -9) is taken over.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { openStore } from "../src/index.js";

const dir = mkdtempSync(path.join(tmpdir(), "rewind-lock-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const pidFile = path.join(dir, "pglite.pid");

it("refuses a folder another live process holds, and takes over one whose owner is gone", async () => {
  // Another process owns the folder (as `rewind dev` would, while `rewind token create` runs).
  const other = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"]);
  try {
    writeFileSync(pidFile, `${other.pid}\n`);
    const refused = openStore({ dataDir: dir, migrate: true });
    await expect(refused).rejects.toMatchObject({ code: "CONFLICT" });
    await expect(refused).rejects.toThrow(
      new RegExp(`open in another process \\(pid ${other.pid}.*Stop that process`),
    );
  } finally {
    other.kill("SIGKILL");
    await new Promise((resolve) => other.once("exit", resolve));
  }
  // Its owner is gone: the folder is taken over, held while open, let go on close.
  const store = await openStore({ dataDir: dir, migrate: true });
  expect(existsSync(pidFile)).toBe(true);
  await store.close();
  expect(existsSync(pidFile)).toBe(false);
});
