/**
 * What every browser test drives: a real `rewind dev` on a free port in a fresh folder, a client
 * of its API with the local token, and headless Chromium; `close` stops them and removes the
 * folder.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { startDevPlatform, type DevPlatform } from "@rewind/dev";
import { Rewind, type Toolset } from "@rewind/sdk";
import { launchChromium } from "./browser.js";

export interface DashboardHarness {
  /** The test's own folder (the embedded database is in its `.rewind/`). */
  dir: string;
  platform: DevPlatform;
  api: Rewind;
  browser: Browser;
  close(): Promise<void>;
}

export async function startDashboard(
  folderPrefix: string,
  toolsets: readonly Toolset[],
): Promise<DashboardHarness> {
  const dir = mkdtempSync(path.join(tmpdir(), folderPrefix));
  let platform: DevPlatform | undefined;
  let browser: Browser;
  try {
    platform = await startDevPlatform({ port: 0, dataDir: path.join(dir, ".rewind"), toolsets });
    browser = await launchChromium();
  } catch (error) {
    // Nothing is left behind when a part does not start (a missing Chromium, say).
    await platform?.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const api = new Rewind({ url: platform.url, token: platform.token });
  return {
    dir,
    platform,
    api,
    browser,
    async close() {
      await browser.close();
      await platform.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
