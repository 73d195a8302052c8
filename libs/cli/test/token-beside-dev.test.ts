/**
 * Issue 17: `rewind token create` beside a running `rewind dev` opened the same embedded database
 * folder from a second process; it printed a token the server never saw (the write was lost), and
 * two Postgres instances on one folder risk corrupting it. The command now finds the folder held
 * and goes through the running server's API instead: the token it prints works there.
 */
import { execFile } from "node:child_process";
import { expect, it } from "vitest";
import { usePlatform } from "./platform-harness.js";

const h = usePlatform([]);

function rewind(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [h.cli, ...args],
      // The embedded database in the working folder, as `rewind dev` there has it open.
      { cwd: h.dir, timeout: 60_000, env: { ...h.env, DATABASE_URL: "" } },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

it("makes a token the running server knows, through its API, and lists and revokes it", async () => {
  const made = await rewind("token", "create", "--label", "beside-dev", "--scope", "read");
  expect(made.code, made.stderr).toBe(0);
  const token = made.stdout.trim();
  expect(token).toMatch(/^rw_/);
  const read = await fetch(`${h.env.REWIND_URL}/v1/runs`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(read.status, "the server knows the token").toBe(200);
  expect(made.stderr).toContain("open in `rewind dev`: asking its API");

  const listed = await rewind("token", "list", "--json");
  expect(listed.code, listed.stderr).toBe(0);
  const { tokens } = JSON.parse(listed.stdout) as { tokens: { id: string; label: string }[] };
  const mine = tokens.find((t) => t.label === "beside-dev");
  expect(mine).toBeDefined();
  expect(listed.stdout).not.toContain(token); // never a plaintext

  const revoked = await rewind("token", "revoke", mine!.id);
  expect(revoked.code, revoked.stderr).toBe(0);
  const after = await fetch(`${h.env.REWIND_URL}/v1/runs`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(after.status).toBe(401);
}, 120_000);
