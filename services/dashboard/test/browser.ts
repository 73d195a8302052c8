/**
 * Headless Debian Chromium for the dashboard's browser tests, a page that records what went
 * wrong in it, an axe-core check, and the folder screenshots go to (printed, kept by CI).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `No Chromium at ${CHROMIUM}: install it (\`apt-get install -y chromium\`, as .ci/run does) or point CHROMIUM_PATH at one`,
    );
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}

export type WatchedPage = Page & { problems: string[] };

/** A new page whose errors, console errors and dialogs (alert() from injected script) are kept. */
export async function watchedPage(browser: Browser, width = 1280): Promise<WatchedPage> {
  const page = (await browser.newPage({ viewport: { width, height: 900 } })) as WatchedPage;
  page.problems = [];
  page.on("pageerror", (error) => page.problems.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") page.problems.push(message.text());
  });
  page.on("dialog", (dialog) => {
    page.problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  return page;
}

/** Where screenshots go: SCREENSHOT_DIR (CI keeps it as an artifact), or a new temp folder. */
export function screenshotDir(): string {
  const dir =
    process.env.SCREENSHOT_DIR ?? mkdtempSync(path.join(tmpdir(), "rewind-dashboard-shots-"));
  mkdirSync(dir, { recursive: true });
  console.log(`dashboard screenshots: ${dir}`);
  return dir;
}

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/**
 * axe-core's serious and critical violations on the page as it is now. Evaluated through the
 * DevTools protocol, which the page's CSP does not govern (the page itself may run no inline script).
 */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run: (o: unknown) => Promise<{
            violations: {
              id: string;
              impact: string;
              help: string;
              nodes: { target: string[] }[];
            }[];
          }>;
        };
      }
    ).axe;
    const result = await axe.run({ resultTypes: ["violations"] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.slice(0, 3).map((n) => n.target.join(" ")),
    }));
  });
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.targets.join("; ")})`);
}
