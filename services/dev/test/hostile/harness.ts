/**
 * The hostile suite's platform: `rewind dev` in this process (API, executor, timers) on a PGlite
 * folder of its own, and the invariants every hostile case is followed by: the platform still
 * serves, an honest run started now completes, and every run stored before is still there.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { compileScript, type CompiledScript } from "@rewind/sandbox";
import { Rewind } from "@rewind/sdk";
import { startDevPlatform, type DevPlatform, type DevPlatformOptions } from "../../src/index.js";

export interface HostilePlatform {
  platform: DevPlatform;
  api: Rewind;
  url: string;
  token: string;
  /** Headers of the platform's own token, for raw requests. */
  auth: { authorization: string };
  /** Every run id the suite saw stored: none may disappear. */
  runs: Set<string>;
  honest: CompiledScript;
  /** The invariants, checked after each hostile case. */
  check(): Promise<void>;
  close(): Promise<void>;
}

export async function openHostilePlatform(
  options: Partial<DevPlatformOptions> = {},
): Promise<HostilePlatform> {
  const dir = mkdtempSync(path.join(tmpdir(), "rewind-hostile-"));
  const platform = await startDevPlatform({ port: 0, dataDir: dir, ...options });
  const api = new Rewind({ url: platform.url, token: platform.token });
  const honest = await compileScript({
    source: "export default async function main(input: { n: number }) { return input.n * 2; }",
    filename: "honest.ts",
  });
  const runs = new Set<string>();
  const hostile: HostilePlatform = {
    platform,
    api,
    url: platform.url,
    token: platform.token,
    auth: { authorization: `Bearer ${platform.token}` },
    runs,
    honest,
    async check() {
      const health = await fetch(`${platform.url}/healthz`);
      expect(health.status, "the platform still serves").toBe(200);
      const n = runs.size + 1;
      const { id } = await api.runs.start({ script: honest, input: { n } });
      runs.add(id);
      expect(await api.runs.result(id, "20s"), "an honest run completes").toMatchObject({
        status: "completed",
        result: n * 2,
      });
      for (const runId of runs) {
        const run = await platform.store.getRun(runId);
        expect(run, `run ${runId} is still stored`).toBeDefined();
      }
    },
    async close() {
      await platform.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return hostile;
}
