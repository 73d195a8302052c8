/**
 * A run of 10,000 journal entries and how the run page copes with it, measured in the browser:
 * shared by the browser test (with generous bounds) and load-tests/dashboard (which prints them).
 */
import type { Page } from "playwright-core";

/** 500 calls, each answered, each followed by 18 lines of output: 10,002 entries with its ends. */
export const LARGE_RUN_SCRIPT = `import { tools } from "rewind";
export default async function main(input: { calls: number; lines: number }) {
  let total = 0;
  for (let i = 0; i < input.calls; i++) {
    const found = await tools.lookup({ q: "question " + i });
    total += found.answer;
    for (let j = 0; j < input.lines; j++) console.log("call", i, "line", j, "total", total);
  }
  return { total };
}
`;
export const LARGE_RUN_INPUT = { calls: 500, lines: 18 };
export const LARGE_RUN_ENTRIES = 2 + 500 * (2 + 18);

export interface PageFigures {
  /** From asking for the run's page to its first journal row answering a click (ms). */
  interactiveMs: number;
  /** From asking for it to every entry in the list (ms). */
  wholeJournalMs: number;
}

/**
 * Opens the dashboard with the token, then asks for the run's page (as a click on a link would,
 * without a new load) and answers the page's clock at that moment: where timeOpening starts.
 */
export async function askForRunPage(
  page: Page,
  dashboard: { url: string; token: string },
  runId: string,
): Promise<number> {
  await page.goto(`${dashboard.url}/dashboard/#token=${dashboard.token}`);
  await page.locator("#forget").waitFor();
  return page.evaluate((id) => {
    location.hash = `#/runs/${id}`;
    return performance.now();
  }, runId);
}

/**
 * Clicks the first row of the journal as soon as there is one and waits for its entry beside
 * the script (interactive), then for the whole journal in the list. Timed with the page's own
 * clock from `begun` (its `performance.now()` when the page was asked for; 0: the navigation's
 * start), so the test's round trips to the browser count against the page, not for it.
 */
export async function timeOpening(
  page: Page,
  begun: number,
  entries: number,
): Promise<PageFigures> {
  await page.locator("ol.entries li button").first().click();
  await page.locator("aside.details article.entry").first().waitFor();
  const interactive = await page.evaluate(() => performance.now());
  await page
    .locator("#timeline-title")
    .filter({ hasText: `Journal (${entries.toLocaleString("en-US")} entries)` })
    .waitFor({ timeout: 60_000 });
  const whole = await page.evaluate(() => performance.now());
  return { interactiveMs: interactive - begun, wholeJournalMs: whole - begun };
}

export interface ScrollFigures {
  frames: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  /** Rows in the document at the end: the list renders only those in view. */
  rowsInDocument: number;
}

/**
 * Scrolls the journal's list down `step` pixels an animation frame (150: five rows a frame,
 * 9,000 px/s, a fast fling), from the top, and measures the time between frames
 * (requestAnimationFrame's timestamps): a frame that took long to render shows as a long gap.
 */
export function scrollAndTime(page: Page, frames = 400, step = 150): Promise<ScrollFigures> {
  return page.evaluate(
    async ([frames, step]) => {
      const list = document.querySelector<HTMLElement>("ol.entries")!;
      list.scrollTop = 0;
      const gaps: number[] = [];
      await new Promise<void>((done) => {
        let last: number | undefined;
        const tick = (now: number) => {
          if (last !== undefined) gaps.push(now - last);
          last = now;
          list.scrollTop += step;
          if (gaps.length < frames) requestAnimationFrame(tick);
          else done();
        };
        requestAnimationFrame(tick);
      });
      gaps.sort((a, b) => a - b);
      const at = (q: number) => gaps[Math.min(gaps.length - 1, Math.floor(q * gaps.length))]!;
      return {
        frames: gaps.length,
        p50Ms: at(0.5),
        p95Ms: at(0.95),
        maxMs: gaps[gaps.length - 1]!,
        rowsInDocument: list.querySelectorAll("li").length,
      };
    },
    [frames, step] as const,
  );
}
