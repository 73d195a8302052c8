/**
 * The run page with a run of 10,000 journal entries, in headless Chromium against a real
 * `rewind dev` (embedded database) and in the run's explore file: how soon it is interactive
 * (its first journal row answers a click), how soon the whole journal is listed, and the time
 * between animation frames while the journal scrolls from end to end (p50, p95, max).
 * Targets (issue 15): interactive within 1 s; p95 between frames under 20 ms.
 *
 *   npm run bench:dashboard -w load-tests
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { startDevPlatform } from "@rewind/dev";
import { compileScript } from "@rewind/sandbox";
import { Rewind } from "@rewind/sdk";
import shop from "../../examples/tools.ts";
import { launchChromium } from "../../services/dashboard/test/browser.ts";
import {
  LARGE_RUN_ENTRIES,
  LARGE_RUN_INPUT,
  LARGE_RUN_SCRIPT,
  scrollAndTime,
  askForRunPage,
  timeOpening,
} from "../../services/dashboard/test/large-run.ts";

const CLI = fileURLToPath(new URL("../../libs/cli/dist/main.js", import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), "rewind-bench-dashboard-"));
const platform = await startDevPlatform({
  port: 0,
  dataDir: path.join(dir, ".rewind"),
  toolsets: [shop],
});
const browser = await launchChromium();
try {
  const api = new Rewind({ url: platform.url, token: platform.token });
  const script = await compileScript({ source: LARGE_RUN_SCRIPT, filename: "large.ts" });
  const made = performance.now();
  const runId = (await api.runs.start({ script, toolset: "shop", input: LARGE_RUN_INPUT })).id;
  while (!(await api.runs.result(runId, "30s")).ended);
  console.log(
    `a run of ${LARGE_RUN_ENTRIES} entries made in ${((performance.now() - made) / 1000).toFixed(1)} s`,
  );
  const read = performance.now();
  await api.runs.journal(runId);
  console.log(`GET its whole journal: ${(performance.now() - read).toFixed(0)} ms`);

  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const begun = await askForRunPage(page, platform, runId);
  const live = {
    ...(await timeOpening(page, begun, LARGE_RUN_ENTRIES)),
    ...(await scrollAndTime(page)),
  };
  await page.close();

  const file = path.join(dir, "large.html");
  await promisify(execFile)(process.execPath, [CLI, "explore", runId, "-o", file], {
    env: { ...process.env, REWIND_URL: platform.url, REWIND_TOKEN: platform.token },
  });
  const offline = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await offline.goto(pathToFileURL(file).href);
  const explore = {
    ...(await timeOpening(offline, 0, LARGE_RUN_ENTRIES)),
    ...(await scrollAndTime(offline)),
  };
  await offline.close();

  const row = (name: string, f: typeof live) =>
    `${name.padEnd(14)} ${f.interactiveMs.toFixed(0).padStart(6)} ms ${f.wholeJournalMs.toFixed(0).padStart(8)} ms ${f.p50Ms.toFixed(1).padStart(7)} ${f.p95Ms.toFixed(1).padStart(7)} ${f.maxMs.toFixed(1).padStart(7)}   ${f.rowsInDocument}`;
  console.log(
    `\n${"page".padEnd(14)} ${"interactive".padStart(9)} ${"whole list".padStart(11)} ${"p50".padStart(7)} ${"p95".padStart(7)} ${"max".padStart(7)}   rows in DOM (frames: ${live.frames})`,
  );
  console.log(row("dashboard", live));
  console.log(row("explore file", explore));
  console.log(
    `targets: interactive < 1000 ms, p95 between frames < 20 ms; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
} finally {
  await browser.close();
  await platform.close();
  rmSync(dir, { recursive: true, force: true });
}
