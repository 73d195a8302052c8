/**
 * The Runs and Run pages in headless Chromium against a real `rewind dev` (PGlite in a temp
 * folder): list and filter, a run of examples/order.ts with each call beside its line, the
 * scrubber, its approval signal sent from the page, axe-core on each page with data loaded, and
 * a run full of hostile payloads that must execute nothing. Screenshots go to the folder printed.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it as vitestIt } from "vitest";
import { newSeed } from "@rewind/core";
import type { DevPlatform } from "@rewind/dev";
import { compileScript } from "@rewind/sandbox";
import { Rewind, defineToolset } from "@rewind/sdk";
import shop from "../../../examples/tools.js";
import { axeViolations, screenshotDir, watchedPage } from "./browser.js";
import { startDashboard, type DashboardHarness } from "./dashboard-harness.js";

const ORDER = fileURLToPath(new URL("../../../examples/order.ts", import.meta.url));
/** Markup, handlers and a javascript: URL, as a tenant could put them in any value. */
const HOSTILE =
  '</script><script>window.pwned=1</script><img src=x onerror="window.pwned=2">' +
  '<a href="javascript:window.pwned=3">click</a><svg onload="window.pwned=4"></svg>';
const HOSTILE_SCRIPT = `import { tools } from "rewind";
// ${HOSTILE}
export default async function main(input: { evil: string; huge: string }) {
  await tools.lookup({ q: input.evil });
  console.log(input.evil);
  throw new Error(input.evil);
}
`;

/** A script of two files: its one call is made in the helper, lib/ask.ts line 3. */
const ASK_FILES = {
  "main.ts": `import { ask } from "./lib/ask";
export default async function main(input: { q: string }) {
  const answer = await ask(input.q);
  return { answer };
}
`,
  "lib/ask.ts": `import { tools } from "rewind";
export async function ask(q: string): Promise<number> {
  const found = await tools.lookup({ q });
  return found.answer;
}
`,
};

/** A tool that answers on its third try: its outcome's entry notes the attempts. */
const flaky = defineToolset("flaky", {
  settle: {
    run: (_args: { n: number }, ctx) => {
      if (ctx.attempt < 3) throw new Error(`try ${ctx.attempt} failed`);
      return { settled: true };
    },
    retries: 2,
  },
});
const FLAKY_SCRIPT = `import { tools } from "rewind";
export default async function main() {
  return await tools.settle({ n: 1 });
}
`;

/** Browser steps are slow on a loaded machine: each test has two minutes. */
const it = (name: string, test: () => Promise<void>) => vitestIt(name, test, 120_000);

let harness: DashboardHarness | undefined;
let shots = "";
let platform: DevPlatform;
let api: Rewind;
let browser: Browser;
let orderRun = "";
let hostileRun = "";
let multiFileRun = "";
let flakyRun = "";

beforeAll(async () => {
  harness = await startDashboard("rewind-dashboard-runs-", [shop, flaky]);
  ({ platform, api, browser } = harness);
  shots = screenshotDir();
  const order = await compileScript({ file: ORDER });
  orderRun = (await api.runs.start({ script: order, toolset: "shop", input: { orderId: "o-1" } }))
    .id;
  const hostile = await compileScript({ source: HOSTILE_SCRIPT, filename: "hostile.ts" });
  hostileRun = (
    await api.runs.start({
      script: hostile,
      toolset: "shop",
      input: { evil: HOSTILE, huge: "x".repeat(200_000) },
    })
  ).id;
  await api.runs.result(hostileRun, "60s");
  const ask = await api.scripts.compile({ entry: "main.ts", files: ASK_FILES });
  multiFileRun = (await api.runs.start({ script: ask, toolset: "shop", input: { q: "why" } })).id;
  expect((await api.runs.result(multiFileRun, "60s")).status).toBe("completed");
  const settle = await compileScript({ source: FLAKY_SCRIPT, filename: "settle.ts" });
  flakyRun = (await api.runs.start({ script: settle, toolset: "flaky" })).id;
  expect((await api.runs.result(flakyRun, "60s")).status).toBe("completed");
  // The order charges, then waits for its approval.
  for (let i = 0; i < 600 && (await api.runs.get(orderRun)).status !== "waiting"; i++)
    await new Promise((resolve) => setTimeout(resolve, 100));
}, 180_000);

afterAll(async () => {
  await harness?.close();
});

it("lists runs with counts, filters them by script and status, and opens one", async () => {
  const page = await watchedPage(browser);
  await page.goto(`${platform.url}/dashboard/#token=${platform.token}`);
  await page.evaluate(() => (location.hash = "#/runs"));
  await page.locator(`tr[data-run="${orderRun}"]`).waitFor();
  expect(await page.locator(`tr[data-run="${hostileRun}"]`).count()).toBe(1);
  // The runs beforeAll started: the order, the hostile, the multi-file and the flaky one.
  const started = [orderRun, hostileRun, multiFileRun, flakyRun].length;
  await expect.poll(() => page.locator('[data-count="all"]').textContent()).toBe(String(started));
  expect(await page.locator('[data-count="failed"]').textContent()).toBe("1");
  expect(await page.locator(`tr[data-run="${orderRun}"] td`).nth(2).textContent()).toBe("order.ts");

  await page.getByLabel("Script").fill("order.ts");
  await page.getByRole("button", { name: "Filter" }).click();
  // The list is emptied while the filtered page loads: wait for the page itself.
  await expect
    .poll(() =>
      page.locator("#runs tbody tr").evaluateAll((trs) => trs.map((tr) => tr.dataset.run)),
    )
    .toEqual([orderRun]);
  expect(page.url()).toContain("#/runs?script=order.ts");
  await page.locator('select[name="status"]').selectOption("failed");
  await page.getByRole("button", { name: "Filter" }).click();
  await page.locator("#runs-empty").waitFor();
  await page.screenshot({ path: path.join(shots, "runs-filtered-empty.png"), fullPage: true });

  await page.getByRole("link", { name: "Clear" }).click();
  await page.locator(`tr[data-run="${hostileRun}"]`).waitFor();
  await page.locator(`tr[data-run="${multiFileRun}"]`).waitFor();
  expect(await axeViolations(page)).toEqual([]);
  await page.screenshot({ path: path.join(shots, "runs.png"), fullPage: true });
  // Live: a run started meanwhile shows up, counted, with no reload (a refresh every 2 s).
  const order = await compileScript({ file: ORDER });
  const late = await api.runs.start({ script: order, toolset: "shop", input: { orderId: "o-9" } });
  await page.locator(`tr[data-run="${late.id}"]`).waitFor({ timeout: 10_000 });
  await expect
    .poll(() => page.locator('[data-count="all"]').textContent())
    .toBe(String(started + 1));
  expect(await page.locator("#runs tbody tr").first().getAttribute("data-run")).toBe(late.id);
  await page.getByRole("link", { name: orderRun }).click();
  await page.locator("#run-title").waitFor();
  expect(page.url()).toContain(`#/runs/${orderRun}`);
  expect(page.problems).toEqual([]);
  await page.close();
});

it("shows each call of examples/order.ts beside its line, scrubs the journal, and sends the approval", async () => {
  const page = await watchedPage(browser);
  await page.goto(`${platform.url}/dashboard/#token=${platform.token}`);
  await page.evaluate((id) => (location.hash = `#/runs/${id}`), orderRun);
  // Line 5 is `await tools.charge(…)`: its call and its result are pinned there.
  const charge = page.locator('li.line[data-line="5"] button.mark');
  await charge.waitFor();
  expect(await charge.textContent()).toBe("2");
  expect(await page.locator('li.line[data-line="5"] .text').textContent()).toContain(
    "tools.charge",
  );
  await charge.click();
  const details = page.locator("aside.details");
  await expect.poll(() => details.locator("article.entry").count()).toBe(2);
  const call = details.locator("article.entry").first();
  expect(await call.locator("h4").textContent()).toBe("#2 call charge");
  expect(await call.textContent()).toContain('"orderId": "o-1"');
  expect(await call.textContent()).toContain(`${orderRun}/2`); // its callId
  expect(await call.textContent()).toContain('"id": "ch_o-1"'); // its result, opened
  expect(await call.locator("dl.facts").textContent()).toContain("attempts1"); // tried once

  // Its timings: created, and the start of its logical clock (its run.started).
  expect(await page.locator(".run-header dl").textContent()).toMatch(
    /created.+started.+\(its logical clock's start\)logical time/,
  );
  // The scrubber: after #2 the charge is in flight at line 5.
  await page.locator("#scrub").fill("2");
  await expect
    .poll(() => page.locator("#scrub-state").textContent())
    .toBe("#2: line 5; in flight: #2 call charge");
  // A row of the timeline picks its line in the script, and back.
  await page.locator('ol.entries li[data-seq="3"] button').click();
  expect(await page.locator('li.line[data-line="5"]').getAttribute("class")).toContain("selected");
  expect(await axeViolations(page)).toEqual([]);
  await page.screenshot({ path: path.join(shots, "run-order-waiting.png"), fullPage: true });

  const form = page.getByRole("form", { name: "Send a signal" });
  await form.getByLabel("Signal").fill("approval");
  await form.getByLabel("Payload (JSON)").fill('{"approved": true}');
  await form.getByRole("button", { name: "Send signal" }).click();
  await expect.poll(() => page.locator(".outcome").textContent()).toBe("signal approval: sent");
  // The run moves on: the signal and the ten-day sleep arrive in the journal live.
  const signal = page.locator("ol.entries li.signal");
  await signal.waitFor({ timeout: 30_000 });
  expect(await signal.textContent()).toContain("signal approval");
  expect(await signal.locator(".brief").textContent()).toBe('{"approved":true}');
  await page.locator("ol.entries li.timer-set").nth(1).waitFor({ timeout: 30_000 });
  // Timers with when they are due: the approval's three days (cancelled), the ten-day sleep.
  expect(await page.locator("ol.entries li.timer-set .took").allTextContents()).toEqual([
    "due after 3 d 0 h",
    "due after 10 d 0 h",
  ]);
  await page.screenshot({ path: path.join(shots, "run-order-approved.png"), fullPage: true });
  expect(page.problems).toEqual([]);
  await page.close();
});

it("says how many tries a call's tool took", async () => {
  const page = await watchedPage(browser);
  await page.goto(`${platform.url}/dashboard/#token=${platform.token}`);
  await page.evaluate((id) => (location.hash = `#/runs/${id}`), flakyRun);
  const mark = page.locator('li.line[data-line="3"] button.mark');
  await mark.waitFor();
  await mark.click();
  const entries = page.locator("aside.details article.entry");
  await expect.poll(() => entries.count()).toBe(2);
  // The call and its result both say it: the tool failed twice, then answered.
  for (const entry of await entries.all())
    expect(await entry.locator("dl.facts").textContent()).toContain("attempts3");
  expect(page.problems).toEqual([]);
  await page.close();
});

it("executes nothing of a run full of hostile payloads, and cuts its huge value", async () => {
  const page = await watchedPage(browser);
  await page.goto(`${platform.url}/dashboard/#token=${platform.token}`);
  await page.evaluate((id) => (location.hash = `#/runs/${id}`), hostileRun);
  await page.locator('li.line[data-line="4"] button.mark').waitFor();
  await page.locator('li.line[data-line="4"] button.mark').click();
  await page.locator("aside.details article.entry").first().waitFor();
  // Every value shown whole, as text.
  for (const button of await page.getByRole("button", { name: /^Show all of/ }).all())
    await button.click();
  expect(await page.locator("body").textContent()).toContain(HOSTILE);
  expect(await page.evaluate(() => (window as { pwned?: unknown }).pwned)).toBeUndefined();
  expect(
    await page.locator("main img, main svg, main script, main a[href^='javascript']").count(),
  ).toBe(0);
  // The error is text too, in the header and in the list.
  expect(await page.locator(".run-header pre.error").textContent()).toContain(HOSTILE);
  // Its output, in brief, in the journal's row: text too.
  expect(await page.locator('ol.entries li[data-seq="4"] .brief').textContent()).toContain(
    JSON.stringify(HOSTILE).slice(0, 40),
  );
  // The failure is pinned where it was thrown (its stack's frame in the script): line 6.
  expect(await page.locator('li.line[data-line="6"] button.mark').textContent()).toBe("1");
  expect(await page.locator('ol.entries li[data-seq="5"] .where').textContent()).toBe("line 6");
  expect(page.problems).toEqual([]);
  await page.screenshot({ path: path.join(shots, "run-hostile.png") });
  await page.evaluate(() => (location.hash = "#/runs"));
  await page.locator(`tr[data-run="${hostileRun}"] .error-cell`).waitFor();
  expect(await page.locator(`tr[data-run="${hostileRun}"] .error-cell`).textContent()).toBe(
    HOSTILE,
  );
  expect(await page.evaluate(() => (window as { pwned?: unknown }).pwned)).toBeUndefined();
  await page.close();
});

it("previews a fork of the failed run, then forks it from the keyboard alone", async () => {
  const page = await watchedPage(browser);
  await page.goto(`${platform.url}/dashboard/#token=${platform.token}`);
  await page.evaluate((id) => (location.hash = `#/runs/${id}`), hostileRun);
  // locator.press focuses the button as found at that moment, then presses the key: a re-render
  // between a separate focus() and keyboard.press() (the run's poll) could drop the focus.
  await page.getByRole("button", { name: "Preview fork" }).press("Enter");
  const region = page.getByRole("region", { name: "Fork preview" });
  await region.waitFor();
  expect(await region.textContent()).toMatch(/Reuses \d+ entries/);
  expect(await axeViolations(page)).toEqual([]);
  await page.screenshot({ path: path.join(shots, "run-fork-preview.png"), fullPage: true });
  await region.getByRole("button", { name: "Fork" }).press("Enter");
  // The fork's own page, naming its parent.
  await expect.poll(() => page.url(), { timeout: 20_000 }).not.toContain(hostileRun);
  const fork = decodeURIComponent(page.url().split("#/runs/")[1]!);
  // The parent is linked from the header and from "Forked from": look in the latter alone.
  await page
    .getByRole("heading", { name: "Forked from" })
    .getByRole("link", { name: hostileRun })
    .waitFor();
  expect((await api.runs.get(fork)).parent?.runId).toBe(hostileRun);
  // Back on the parent (from the fork's header link, by the keyboard): its header lists the fork.
  await page.locator(".run-header dl").getByRole("link", { name: hostileRun }).press("Enter");
  await page.locator(".run-header dl a.fork").first().waitFor({ timeout: 10_000 });
  expect(await page.locator(".run-header dl a.fork").allTextContents()).toContainEqual(
    expect.stringMatching(new RegExp(`^${fork} \\(\\w+\\)$`)),
  );
  expect(page.problems).toEqual([]);
  await page.close();
});

it("shows each file of a multi-file script, its calls pinned in the file that made them", async () => {
  const page = await watchedPage(browser);
  await page.goto(`${platform.url}/dashboard/#token=${platform.token}`);
  await page.evaluate((id) => (location.hash = `#/runs/${id}`), multiFileRun);
  const files = page.getByRole("group", { name: "The script's files" });
  await files.waitFor();
  expect(await files.getByRole("button").allTextContents()).toEqual([
    "main.ts (entry) 0 entries",
    "lib/ask.ts 2 entries",
  ]);
  expect(await page.locator(".source figcaption").textContent()).toMatch(/^main\.ts as this run/);
  // A journal row of the helper's call opens its file at its line.
  const call = page.locator('ol.entries li[data-seq="2"]');
  expect(await call.locator(".where").textContent()).toBe("lib/ask.ts line 3");
  await call.getByRole("button").click();
  await expect
    .poll(() => page.locator(".source figcaption").textContent())
    .toMatch(/^lib\/ask\.ts as this run/);
  expect(
    await files.getByRole("button", { name: /^lib\/ask\.ts/ }).getAttribute("aria-pressed"),
  ).toBe("true");
  const line = page.locator('li.line[data-line="3"]');
  expect(await line.getAttribute("class")).toContain("selected");
  expect(await line.locator(".text").textContent()).toContain("tools.lookup");
  expect(await page.locator("aside.details h4").textContent()).toBe("#2 call lookup");
  // The scrubber names the file too.
  await page.locator("#scrub").fill("2");
  await expect
    .poll(() => page.locator("#scrub-state").textContent())
    .toBe("#2: lib/ask.ts line 3; in flight: #2 call lookup");
  // Back to the entry file by its button, then the helper's mark lists both entries of line 3.
  await files.getByRole("button", { name: /^main\.ts/ }).click();
  await expect.poll(() => page.locator("button.mark").count()).toBe(0);
  await files.getByRole("button", { name: /^lib\/ask\.ts/ }).click();
  await page.locator('li.line[data-line="3"] button.mark').click();
  await expect
    .poll(() => page.locator("aside.details h3").textContent())
    .toBe("lib/ask.ts line 3: 2 entries");
  expect(await page.locator("aside.details article.entry").count()).toBe(2);
  expect(await axeViolations(page)).toEqual([]);
  await page.screenshot({ path: path.join(shots, "run-multi-file.png"), fullPage: true });
  expect(page.problems).toEqual([]);
  await page.close();
});

it("pages through the runs 25 at a time, newest or oldest first", async () => {
  // 30 runs of a toolset of their own, of an epoch no worker runs: they stay queued.
  const order = await compileScript({ file: ORDER });
  await platform.store.putScript("default", order);
  const ids = Array.from({ length: 30 }, (_, i) => `run_pager_${String(i).padStart(2, "0")}`);
  for (const runId of ids)
    await platform.store.createRun({
      ttlMs: 600_000,
      started: {
        seq: 1,
        kind: "run.started",
        at: Date.now(),
        runId,
        scriptHash: order.hash,
        input: null,
        seed: newSeed(),
        epoch: 99,
        toolset: "pager",
        namespace: "default",
      },
    });
  const page = await watchedPage(browser);
  await page.goto(`${platform.url}/dashboard/#token=${platform.token}`);
  await page.evaluate(() => (location.hash = "#/runs?toolset=pager"));
  const rows = page.locator("#runs tbody tr");
  const shown = () => rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-run")));
  await expect.poll(shown).toEqual([...ids].reverse().slice(0, 25));
  expect(await page.locator('[data-count="queued"]').textContent()).toBe("30");
  const newer = page.getByRole("button", { name: "Newer" });
  const older = page.getByRole("button", { name: "Older" });
  expect(await newer.isDisabled()).toBe(true);
  await older.click();
  await expect.poll(shown).toEqual([...ids].reverse().slice(25));
  expect(await older.isDisabled()).toBe(true);
  await newer.click();
  await expect.poll(shown).toEqual([...ids].reverse().slice(0, 25));
  // Oldest first: the same runs the other way, from the first.
  await page.locator('select[name="order"]').selectOption("oldest");
  await page.getByRole("button", { name: "Filter" }).click();
  await expect.poll(shown).toEqual(ids.slice(0, 25));
  expect(page.url()).toContain("order=oldest");
  await page.getByRole("button", { name: "Newer" }).click();
  await expect.poll(shown).toEqual(ids.slice(25));
  await page.screenshot({ path: path.join(shots, "runs-paged.png"), fullPage: true });
  expect(page.problems).toEqual([]);
  await page.close();
});

it("fits the Runs list and a run's page in a narrow screen, scrolling only inside boxes", async () => {
  const page = await watchedPage(browser, 390);
  await page.goto(`${platform.url}/dashboard/#token=${platform.token}`);
  /** What sticks out of the screen, outside the boxes that scroll on their own. */
  const overflow = () =>
    page.evaluate(() => ({
      page: document.documentElement.scrollWidth - window.innerWidth,
      wider: [...document.querySelectorAll("body *")]
        .filter(
          (e) =>
            e.closest(".table-scroll, ol.code, ol.entries, pre, .scrubber") === null &&
            e.getBoundingClientRect().right > window.innerWidth + 1,
        )
        .map((e) => `${e.tagName.toLowerCase()}.${e.className}`)
        .slice(0, 5),
    }));
  await page.evaluate(() => (location.hash = "#/runs?toolset=shop"));
  await page.locator(`tr[data-run="${orderRun}"]`).waitFor();
  expect(await overflow()).toEqual({ page: 0, wider: [] });
  await page.screenshot({ path: path.join(shots, "runs-narrow.png"), fullPage: true });
  await page.evaluate((id) => (location.hash = `#/runs/${id}`), orderRun);
  await page.locator('li.line[data-line="5"] button.mark').click();
  await page.locator("aside.details article.entry").first().waitFor();
  expect(await overflow()).toEqual({ page: 0, wider: [] });
  await page.screenshot({ path: path.join(shots, "run-narrow.png"), fullPage: true });
  expect(page.problems).toEqual([]);
  await page.close();
});

it("cancels an open run from its page, after asking", async () => {
  // A run of its own, waiting on its approval: the other tests keep theirs.
  const order = await compileScript({ file: ORDER });
  const { id } = await api.runs.start({
    script: order,
    toolset: "shop",
    input: { orderId: "o-cancel" },
  });
  await expect
    .poll(async () => (await api.runs.get(id)).status, { timeout: 30_000 })
    .toBe("waiting");
  const page = await watchedPage(browser);
  await page.goto(`${platform.url}/dashboard/#token=${platform.token}`);
  await page.evaluate((run) => (location.hash = `#/runs/${run}`), id);
  await page.getByRole("button", { name: "Cancel run…" }).click();
  // Asked first: keeping it changes nothing.
  await page.getByRole("button", { name: "Keep it" }).click();
  expect((await api.runs.get(id)).status).toBe("waiting");
  await page.getByRole("button", { name: "Cancel run…" }).click();
  await page.getByRole("button", { name: "Yes, cancel it" }).click();
  await expect.poll(() => page.locator(".outcome").textContent()).toBe("cancel: asked");
  await expect
    .poll(async () => (await api.runs.get(id)).status, { timeout: 30_000 })
    .toBe("cancelled");
  // The page follows: its status, the journal's run.cancelled, and no more actions to cancel.
  await expect.poll(() => page.locator(".run-header").textContent()).toContain("cancelled");
  await page.locator("ol.entries li", { hasText: "run.cancelled" }).waitFor();
  expect(await page.getByRole("button", { name: "Cancel run…" }).count()).toBe(0);
  expect(page.problems).toEqual([]);
  await page.close();
});
