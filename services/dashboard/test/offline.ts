/**
 * Opening an explore file as a user would (file://), with every request the page makes
 * recorded: anything other than the file itself is refused and reported, so a test can say
 * that nothing left the page.
 */
import { execFile } from "node:child_process";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import type { Browser } from "playwright-core";
import { watchedPage, type WatchedPage } from "./browser.js";

const CLI = new URL("../../../libs/cli/dist/main.js", import.meta.url).pathname;

/** `rewind explore …` as a process, against `env` (REWIND_URL, REWIND_TOKEN); its stdout. */
export async function rewindExplore(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, "explore", ...args], {
    env: { ...process.env, NO_COLOR: "1", ...env },
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

export type OfflinePage = WatchedPage & {
  /** Requests that reached the network layer (other than the file's own): each refused here. */
  sent: string[];
  /** Requests the page began that its policy stopped before they were sent (failed: `csp`). */
  blockedByPolicy: string[];
};

/**
 * The file opened in a new page. A request the page's policy lets through reaches the routing
 * below and is refused and listed in `sent`; one the policy stops is still announced by the
 * browser, then fails as blocked by it (`csp`): `blockedByPolicy`. Any other request event (one neither
 * routed nor blocked) is listed in `sent` too.
 */
export async function openOffline(browser: Browser, file: string, width = 1280) {
  const page = (await watchedPage(browser, width)) as OfflinePage;
  page.sent = [];
  page.blockedByPolicy = [];
  const own = pathToFileURL(file).href;
  await page.route("**/*", async (route) => {
    const url = route.request().url();
    if (url === own) return route.continue();
    page.sent.push(url);
    return route.abort("blockedbyclient");
  });
  const announced = new Set<string>();
  page.on("request", (request) => {
    if (request.url() !== own) announced.add(request.url());
  });
  page.on("requestfailed", (request) => {
    const url = request.url();
    // Chromium names the reason `csp` (net::ERR_BLOCKED_BY_CSP in other builds).
    if (/^csp$|BLOCKED_BY_CSP/.test(request.failure()?.errorText ?? "")) {
      announced.delete(url);
      page.blockedByPolicy.push(url);
    }
  });
  // What was announced and neither routed nor blocked (a prefetch the routing missed) counts too.
  page.on("requestfinished", (request) => {
    if (announced.delete(request.url()) && !page.sent.includes(request.url()))
      page.sent.push(request.url());
  });
  await page.goto(own);
  return page;
}
