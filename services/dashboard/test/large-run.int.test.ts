/**
 * A run of 10,000 journal entries on the run page, in headless Chromium against a real
 * `rewind dev`, and in its explore file: interactive within 1 s, and while the journal scrolls
 * from end to end the p95 time between animation frames under 20 ms (the figures; the
 * bounds here are generous, for a loaded CI machine: load-tests/dashboard prints the figures).
 */
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { DevPlatform } from "@rewind/dev";
import { compileScript } from "@rewind/sandbox";
import shop from "../../../examples/tools.js";
import { screenshotDir, watchedPage } from "./browser.js";
import { startDashboard, type DashboardHarness } from "./dashboard-harness.js";
import {
  LARGE_RUN_ENTRIES,
  LARGE_RUN_INPUT,
  LARGE_RUN_SCRIPT,
  scrollAndTime,
  askForRunPage,
  timeOpening,
} from "./large-run.js";
import { openOffline, rewindExplore } from "./offline.js";

let harness: DashboardHarness | undefined;
let dir = "";
let shots = "";
let platform: DevPlatform;
let browser: Browser;
let runId = "";

beforeAll(async () => {
  harness = await startDashboard("rewind-large-run-", [shop]);
  ({ dir, platform, browser } = harness);
  shots = screenshotDir();
  const { api } = harness;
  const script = await compileScript({ source: LARGE_RUN_SCRIPT, filename: "large.ts" });
  runId = (await api.runs.start({ script, toolset: "shop", input: LARGE_RUN_INPUT })).id;
  for (;;) {
    const result = await api.runs.result(runId, "30s");
    if (result.ended) break;
  }
  expect((await api.runs.get(runId)).lastSeq).toBe(LARGE_RUN_ENTRIES);
}, 300_000);

afterAll(async () => {
  await harness?.close();
});

it("opens a run of 10,000 entries within a second and scrolls its journal at frame rate", async () => {
  const page = await watchedPage(browser);
  const begun = await askForRunPage(page, platform, runId);
  const opened = await timeOpening(page, begun, LARGE_RUN_ENTRIES);
  const scrolled = await scrollAndTime(page);
  console.log(
    `dashboard, ${LARGE_RUN_ENTRIES} entries:`,
    JSON.stringify({ ...opened, ...scrolled }),
  );
  expect(opened.interactiveMs).toBeLessThan(3_000);
  expect(scrolled.p95Ms).toBeLessThan(50);
  expect(scrolled.rowsInDocument).toBeLessThan(200);
  // Scrolled to the end: the last entry is there, in its place.
  await page.evaluate(() => {
    const list = document.querySelector("ol.entries")!;
    list.scrollTop = list.scrollHeight;
  });
  expect(
    await page.locator(`ol.entries li[data-seq="${LARGE_RUN_ENTRIES}"]`).textContent(),
  ).toContain("run.completed");
  await page.screenshot({ path: path.join(shots, "run-large.png"), fullPage: true });
  expect(page.problems).toEqual([]);
  await page.close();
}, 180_000);

it("does the same from its explore file, with no network", async () => {
  const file = path.join(dir, "large.html");
  await rewindExplore([runId, "-o", file], {
    REWIND_URL: platform.url,
    REWIND_TOKEN: platform.token,
  });
  const offline = await openOffline(browser, file);
  const own = await timeOpening(offline, 0, LARGE_RUN_ENTRIES);
  const scrolled = await scrollAndTime(offline);
  console.log(
    `explore file, ${LARGE_RUN_ENTRIES} entries:`,
    JSON.stringify({ ...own, ...scrolled }),
  );
  expect(own.interactiveMs).toBeLessThan(3_000);
  expect(scrolled.p95Ms).toBeLessThan(50);
  expect(offline.sent).toEqual([]);
  expect(offline.problems).toEqual([]);
  await offline.close();
}, 180_000);
