/**
 * `rewind explore` in headless Chromium: the file of a live run (from a real `rewind dev`) and
 * of a journal file (`rewind exec --journal`) open from disk with every request refused and
 * recorded, and show the page the dashboard shows (header, the script with its marks, the
 * journal). A run full of hostile payloads executes nothing, in the dashboard and in its file;
 * the file's policy refuses what a slipped payload would try. Screenshots go to the folder printed.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it as vitestIt } from "vitest";
import type { DevPlatform } from "@rewind/dev";
import { compileScript } from "@rewind/sandbox";
import { Rewind } from "@rewind/sdk";
import shop from "../../../examples/tools.js";
import { axeViolations, screenshotDir, watchedPage } from "./browser.js";
import { startDashboard, type DashboardHarness } from "./dashboard-harness.js";
import { openOffline, rewindExplore } from "./offline.js";

const EXAMPLES = fileURLToPath(new URL("../../../examples/", import.meta.url));
const ORDER = path.join(EXAMPLES, "order.ts");
const CLI = fileURLToPath(new URL("../../../libs/cli/dist/main.js", import.meta.url));

/** Markup, handlers and javascript: URLs, as a tenant could put them in any value. */
const HOSTILE =
  '</script><script>window.pwned=1</script><img src=x onerror="window.pwned=2">' +
  '<a href="javascript:window.pwned=3">click</a><svg onload="window.pwned=4"></svg>' +
  '<div onmouseover="window.pwned=5" style="position:fixed;inset:0">x</div><!-- <iframe src="javascript:parent.pwned=6">';
const HOSTILE_SCRIPT = `import { tools } from "rewind";
// ${HOSTILE}
const shown = ${JSON.stringify(HOSTILE)};
export default async function main(input: { evil: string; huge: string; deep: unknown }) {
  const found = await tools.lookup({ q: input.evil, deep: input.deep, shown } as { q: string });
  await tools.lookup({ q: input.huge });
  console.log(input.evil, JSON.stringify(found));
  console.error(\`<img src=x onerror="window.pwned=7"> \${shown}\`);
  throw new Error(input.evil);
}
`;
/** 400 arrays deep, then a string that would be markup. */
const DEEP = JSON.parse(
  `${"[".repeat(400)}"<b onclick=\\"window.pwned=8\\">deep</b>"${"]".repeat(400)}`,
);
const HUGE = `${"<i>".repeat(10)}${"x".repeat(1_000_000)}`;

const it = (name: string, test: () => Promise<void>) => vitestIt(name, test, 180_000);

let harness: DashboardHarness | undefined;
let dir = "";
let shots = "";
let platform: DevPlatform;
let api: Rewind;
let browser: Browser;
let orderRun = "";
let hostileRun = "";
let env: Record<string, string> = {};

beforeAll(async () => {
  harness = await startDashboard("rewind-explore-", [shop]);
  ({ dir, platform, api, browser } = harness);
  shots = screenshotDir();
  env = { REWIND_URL: platform.url, REWIND_TOKEN: platform.token };
  const order = await compileScript({ file: ORDER });
  orderRun = (await api.runs.start({ script: order, toolset: "shop", input: { orderId: "o-1" } }))
    .id;
  const hostile = await compileScript({ source: HOSTILE_SCRIPT, filename: "hostile.ts" });
  hostileRun = (
    await api.runs.start({
      script: hostile,
      toolset: "shop",
      input: { evil: HOSTILE, huge: HUGE, deep: DEEP },
    })
  ).id;
  expect((await api.runs.result(hostileRun, "60s")).status).toBe("failed");
  for (let i = 0; i < 600 && (await api.runs.get(orderRun)).status !== "waiting"; i++)
    await new Promise((resolve) => setTimeout(resolve, 100));
}, 240_000);

afterAll(async () => {
  await harness?.close();
});

/** What the run page shows, in a form two pages can be compared by. */
async function pageFacts(page: Page) {
  await page.locator("ol.entries li").first().waitFor();
  await page.locator("button.mark").first().waitFor();
  return page.evaluate(() => ({
    title: document.querySelector("#run-title")?.textContent,
    facts: document.querySelector(".run-header dl")?.textContent,
    input: document.querySelector(".run-header .io")?.textContent,
    marks: [...document.querySelectorAll("li.line")]
      .filter((line) => line.querySelector("button.mark") !== null)
      .map(
        (line) =>
          `${line.getAttribute("data-line")}:${line.querySelector("button.mark")!.textContent}`,
      ),
    journal: [...document.querySelectorAll("ol.entries li")].map((row) => row.textContent),
    scrub: document.querySelector("#scrub-state")?.textContent,
  }));
}

it("writes a run's page that opens with no network and shows what the dashboard shows", async () => {
  const file = path.join(dir, "order.html");
  const said = await rewindExplore([orderRun, "-o", file], env);
  expect(said).toContain(`written to ${file}`);
  const page = await openOffline(browser, file);
  const offline = await pageFacts(page);
  expect(offline.title).toContain(orderRun);
  expect(offline.marks).toContain("5:2"); // line 5, `await tools.charge(…)`: the call and its result
  expect(await page.locator("#offline-note").textContent()).toContain("rewind explore");
  await page.locator('li.line[data-line="5"] button.mark').click();
  const call = page.locator("aside.details article.entry").first();
  await call.waitFor();
  expect(await call.textContent()).toContain('"orderId": "o-1"');
  await page.locator("#scrub").fill("2");
  await expect
    .poll(() => page.locator("#scrub-state").textContent())
    .toBe("#2: line 5; in flight: #2 call charge");
  expect(await axeViolations(page)).toEqual([]);
  await page.screenshot({ path: path.join(shots, "explore-order.png"), fullPage: true });
  expect(page.sent).toEqual([]);
  expect(page.problems).toEqual([]);

  // The dashboard's page of the same run, from the API: the same header, marks and journal.
  const live = await watchedPage(browser);
  await live.goto(`${platform.url}/dashboard/#token=${platform.token}`);
  await live.evaluate((id) => (location.hash = `#/runs/${id}`), orderRun);
  const dashboard = await pageFacts(live);
  expect(offline).toEqual({ ...dashboard, scrub: offline.scrub });
  expect(live.problems).toEqual([]);
  await live.close();
  await page.close();
});

it("writes the page of a journal file with the script it ran", async () => {
  const journal = path.join(dir, "order.jsonl");
  await promisify(execFile)(process.execPath, [
    CLI,
    "exec",
    ORDER,
    "--input",
    '{"orderId":"o-2"}',
    "--tools",
    path.join(EXAMPLES, "tools.ts"),
    "--journal",
    journal,
    "--signal",
    'approval={"approved":true}@1h',
  ]);
  await expect(rewindExplore([journal])).rejects.toThrow(/pass the one .* ran with --script/);
  const file = path.join(dir, "order-file.html");
  await rewindExplore([journal, "--script", ORDER, "-o", file]);
  const page = await openOffline(browser, file);
  const shown = await pageFacts(page);
  expect(shown.title).toContain("completed");
  expect(shown.marks).toContain("5:2");
  expect(await page.locator("#explore-origin").textContent()).toContain("order.jsonl");
  expect(await page.locator(".run-header .io").textContent()).toContain('"status": "shipped"');
  expect(shown.journal.some((row) => row?.includes("signal approval"))).toBe(true);
  await page.screenshot({ path: path.join(shots, "explore-journal-file.png"), fullPage: true });
  expect(page.sent).toEqual([]);
  expect(page.problems).toEqual([]);
  await page.close();
});

/** Opens every value and every line's entries, then checks that nothing ran. */
async function provokeAndCheck(page: Page & { problems: string[] }) {
  for (const mark of await page.locator("button.mark").all()) {
    await mark.click();
    // Each opened value's button turns into "Cut …": open the first closed one until none is left.
    const closed = page.getByRole("button", { name: /^Show all of/ });
    while ((await closed.count()) > 0) await closed.first().click();
    await page.locator("aside.details").hover();
  }
  for (const row of await page.locator("ol.entries li button").all()) await row.click();
  await page.mouse.move(10, 10);
  await page.mouse.click(640, 400);
  expect(await page.evaluate(() => (window as { pwned?: unknown }).pwned)).toBeUndefined();
  expect(
    await page
      .locator(
        "main img, main svg, main script, main iframe, main a[href^='javascript'], [onclick], [onerror], [onmouseover]",
      )
      .count(),
  ).toBe(0);
  expect(await page.locator(".run-header pre.error").textContent()).toContain(HOSTILE);
}

it("executes nothing of a hostile run, in the dashboard and in its file, whose policy refuses the rest", async () => {
  const live = await watchedPage(browser);
  const answer = await live.goto(`${platform.url}/dashboard/#token=${platform.token}`);
  // The dashboard's own policy: scripts of its origin only, never an inline one.
  const policy = answer!.headers()["content-security-policy"]!;
  expect(policy).toContain("script-src 'self'");
  expect(policy).not.toContain("unsafe-inline");
  expect(policy).not.toContain("unsafe-eval");
  await live.evaluate((id) => (location.hash = `#/runs/${id}`), hostileRun);
  await live.locator('li.line[data-line="5"] button.mark').waitFor();
  // The megabyte input is in the blob store: listed by its size, read only when asked for.
  const input = live.locator('.run-header [data-deferred="1.input"]');
  expect(await input.textContent()).toMatch(
    /The input: 1,0\d\d,\d{3} bytes, kept in the blob store/,
  );
  await input.getByRole("button", { name: "Load the input" }).click();
  // Read: a value of a megabyte, shown cut until asked for whole.
  await live.getByRole("button", { name: /^Show all of the input/ }).click();
  await expect.poll(() => live.locator(".run-header .io").textContent()).toContain("<i><i><i>");
  expect(await live.locator('ol.entries li[data-seq="4"] .brief').textContent()).toMatch(
    /^\(1,0\d\d,\d{3} bytes, read when opened\)$/,
  );
  await live.locator('li.line[data-line="6"] button.mark').click();
  // The call's arguments, and its result (under the call and as entry #5), each a megabyte:
  // each read when its button is pressed.
  const loads = live.getByRole("button", { name: /^Load the/ });
  expect(await loads.count()).toBe(3);
  for (let left = 3; left > 0; left--) {
    await loads.first().click();
    await expect.poll(() => loads.count()).toBe(left - 1);
  }
  await provokeAndCheck(live);
  expect(await live.locator("body").textContent()).toContain(HOSTILE);
  expect(live.problems).toEqual([]);
  await live.screenshot({ path: path.join(shots, "dashboard-hostile.png"), fullPage: true });
  await live.close();

  const file = path.join(dir, "hostile.html");
  await rewindExplore([hostileRun, "-o", file], env);
  const html = readFileSync(file, "utf8");
  // Two script elements (the data and the page's code), and no tenant text closes either.
  expect(html.match(/<script/gi)).toHaveLength(2);
  expect(html.match(/<\/script/gi)).toHaveLength(2);
  expect(html).toMatch(/script-src 'sha256-[A-Za-z0-9+/]+='; /);
  expect(html).not.toContain("unsafe-inline");
  const page = await openOffline(browser, file);
  await page.locator('li.line[data-line="5"] button.mark').waitFor();
  await provokeAndCheck(page);
  // The megabyte values were left out of the file (64 KiB bound), and the page says where.
  await page.locator('li.line[data-line="7"] button.mark').click();
  await page.locator("[data-omitted]").first().waitFor();
  expect(await page.locator("[data-omitted]").first().textContent()).toContain(
    "Left out of this file",
  );
  expect(html.length).toBeLessThan(600_000);
  expect(page.problems).toEqual([]);
  await page.screenshot({ path: path.join(shots, "explore-hostile.png"), fullPage: true });

  // The second wall: what a payload that slipped through would try is refused by the policy.
  const tried = await page.evaluate(async () => {
    const script = document.createElement("script");
    script.textContent = "window.pwned = 'inline'";
    document.body.append(script);
    const image = new Image();
    image.src = "https://example.com/leak.png";
    let fetched = "sent";
    try {
      await fetch("https://example.com/leak");
    } catch (error) {
      fetched = (error as Error).name;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    return { pwned: (window as { pwned?: unknown }).pwned, fetched };
  });
  expect(tried).toEqual({ pwned: undefined, fetched: "TypeError" });
  expect(page.sent).toEqual([]);
  expect(page.blockedByPolicy).toEqual(["https://example.com/leak.png"]);
  // Each refusal is reported by the browser as a policy violation, and nothing else went wrong.
  expect(page.problems).toHaveLength(4);
  expect(page.problems.join("\n")).toContain("Executing inline script violates");
  expect(page.problems.join("\n")).toContain(`directive: "connect-src 'none'"`);
  expect(page.problems.join("\n")).toContain(`directive: "img-src 'none'"`);
  for (const problem of page.problems) expect(problem).toMatch(/Content Security Policy/);
  await page.close();
});
