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

export type OfflinePage = WatchedPage & { requests: string[] };

/** The file opened in a new page; `requests` lists every request but the file's own, refused. */
export async function openOffline(browser: Browser, file: string, width = 1280) {
  const page = (await watchedPage(browser, width)) as OfflinePage;
  page.requests = [];
  const own = pathToFileURL(file).href;
  await page.route("**/*", async (route) => {
    const url = route.request().url();
    if (url === own) return route.continue();
    page.requests.push(url);
    return route.abort("blockedbyclient");
  });
  // Whatever the routing misses (a service worker, a prefetch) the page still reports here.
  page.on("request", (request) => {
    if (request.url() !== own && !page.requests.includes(request.url()))
      page.requests.push(request.url());
  });
  await page.goto(own);
  return page;
}
