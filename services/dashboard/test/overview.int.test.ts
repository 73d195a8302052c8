/**
 * The Overview in a real browser (headless Chromium) against a real platform (`rewind dev` in
 * this process, on PGlite in a temp folder): it lists a quarantined run and the epochs' counts,
 * shows the report, passes the API's refusals on as they are, and gives the run up.
 *
 * @rewind/dev is not a devDependency of this package: it depends on it (through the API), and
 * turbo refuses a cycle. The workspace links it all the same.
 */
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { newSeed, type RunStartedEntry } from "@rewind/core";
import type { DevPlatform } from "@rewind/dev";
import { compileScript, newRunEpoch } from "@rewind/sandbox";
import { Rewind, defineToolset } from "@rewind/sdk";
import { axeViolations, screenshotDir } from "./browser.js";
import { startDashboard, type DashboardHarness } from "./dashboard-harness.js";

/** Recorded as a tool's argument: the page must show it as text, never run it. */
const MARKUP = "<img src=x onerror=window.pwned=1>";

const SCRIPT = `import { tools, waitForSignal } from "rewind";
export default async function main(input: { amount: number }) {
  await tools.post({ amount: input.amount });
  await waitForSignal("close");
  return "closed";
}
`;
const toolset = defineToolset("ledger", {
  post: async (args: { amount: number }) => ({ posted: args.amount }),
});

let harness: DashboardHarness | undefined;
let platform: DevPlatform;
let api: Rewind;
let browser: Browser;
let scriptHash = "";
let shots = "";

beforeAll(async () => {
  harness = await startDashboard("rewind-dashboard-", [toolset]);
  ({ platform, api, browser } = harness);
  shots = screenshotDir();
  const script = await compileScript({ source: SCRIPT, filename: "ledger.ts" });
  await platform.store.putScript("default", script);
  scriptHash = script.hash;
}, 180_000);

afterAll(async () => {
  await harness?.close();
});

function started(runId: string, epoch: number): RunStartedEntry {
  return {
    seq: 1,
    kind: "run.started",
    at: Date.now(),
    runId,
    scriptHash,
    input: { amount: 10 },
    seed: newSeed(),
    epoch,
    toolset: "ledger",
    namespace: "default",
  };
}

/**
 * A run whose journal recorded tools.post with other arguments (the way a platform fault shows
 * up): its cold replay diverges at seq 2 and the worker holds it.
 */
async function quarantinedRun(): Promise<string> {
  const runId = `run_dash_${Math.random().toString(36).slice(2, 10)}`;
  const first = started(runId, 1);
  const { store } = platform;
  await store.createRun({ started: first, ttlMs: 60_000 });
  const lease = (await store.acquireLease(runId, "recorder", 30_000))!;
  await store.commit([
    {
      lease,
      afterSeq: 1,
      entries: [
        {
          seq: 2,
          kind: "call",
          at: first.at,
          callsite: "ledger.ts:3:15",
          name: "post",
          args: { amount: MARKUP },
          callId: `${runId}/2`,
        },
        { seq: 3, kind: "call.result", at: first.at, callSeq: 2, result: { posted: 99 } },
      ],
      status: "waiting",
    },
  ]);
  await store.releaseLease(lease);
  await api.runs.signal(runId, "close"); // rings: the run is loaded cold, replayed, held
  for (let i = 0; i < 200 && (await api.runs.get(runId)).status !== "quarantined"; i++)
    await new Promise((resolve) => setTimeout(resolve, 50));
  expect((await api.runs.get(runId)).status).toBe("quarantined");
  return runId;
}

async function open(fragment = `#token=${platform.token}`): Promise<Page> {
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(message.text());
  });
  await page.goto(`${platform.url}/dashboard/${fragment}`);
  (page as Page & { problems: string[] }).problems = problems;
  return page;
}

const tile = (page: Page, status: string) => page.locator(`.tile[data-status="${status}"] .count`);

it("lists the quarantined run and the epochs' counts, shows its report, and gives it up", async () => {
  const id = await quarantinedRun();
  // A run of an epoch no worker here runs: it waits in its epoch's queue.
  const stranded = `run_dash_e2_${Math.random().toString(36).slice(2, 10)}`;
  await platform.store.createRun({ started: started(stranded, 99), ttlMs: 60_000 });

  const page = await open();
  const row = page.locator(`tr[data-run="${id}"]`);
  await row.waitFor();
  // The token left the address bar for this tab's storage.
  expect(page.url()).toBe(`${platform.url}/dashboard/`);
  expect(await page.evaluate(() => sessionStorage.getItem("rewind.token"))).toBe(platform.token);

  const cells = await row.locator("td").allTextContents();
  expect(cells[0]).toBe(id);
  // The script by its file name (its hash on hover), beside the toolset.
  expect(cells[1]).toBe("ledger.ts ledger");
  expect(await row.locator("td").nth(1).getAttribute("title")).toBe(scriptHash);
  expect(await row.locator("td a").first().getAttribute("href")).toBe(`#/runs/${id}`);
  expect(cells.slice(2, 5)).toEqual(["1", "divergence", "seq 2"]);

  await expect.poll(() => tile(page, "quarantined").textContent()).toBe("1");
  expect(await tile(page, "queued").textContent()).toBe("1");
  // The quarantined run is of epoch 1, which this runtime still serves; new runs start in the
  // newest epoch it serves (newRunEpoch: 2 on Node 20).
  const epoch1 = page.locator('#epochs tr[data-epoch="1"]');
  expect(await epoch1.textContent()).toMatch(
    /^1 supported.*V8 [\d.]+, isolated-vm 5\.0\.4.*1quarantined 1$/,
  );
  expect(await page.locator(`#epochs tr[data-epoch="${newRunEpoch()}"]`).textContent()).toMatch(
    new RegExp(`^${newRunEpoch()} current`),
  );
  expect(await epoch1.getAttribute("class")).toBe("");
  expect(await epoch1.locator("[data-workers]").textContent()).toBe("1"); // rewind dev's executor
  const other = page.locator('#epochs tr[data-epoch="99"]');
  expect(await other.getAttribute("class")).toBe("unsupported");
  expect(await other.locator("[data-workers]").textContent()).toBe("0");
  expect(await other.textContent()).toMatch(
    /unknown epoch.*queued 1waiting for a worker of epoch 99$/,
  );
  expect(await page.locator("#epochs-waiting").textContent()).toMatch(
    /^1 run waits for a worker of epoch 99: /,
  );

  await row.getByRole("button", { name: "Report" }).click();
  const report = page.locator(`tr[data-report="${id}"]`);
  await report.locator("table.divergence").waitFor();
  expect(await report.locator("h3").first().textContent()).toBe(
    "Diverges at seq 2 (1 entry matched before)",
  );
  const recorded = await report.locator('tr[data-side="recorded"] td').allTextContents();
  expect(recorded[0]).toContain(`post({ amount: "${MARKUP}" })`);
  expect(recorded[1]).toBe("ledger.ts:3:15");
  const replayed = await report.locator('tr[data-side="replayed"] td').allTextContents();
  expect(replayed).toEqual(["call post({ amount: 10 })", "ledger.ts:3:15"]);
  expect(await axeViolations(page)).toEqual([]);
  await page.screenshot({ path: path.join(shots, "overview-report.png"), fullPage: true });
  // Text from the API stayed text: no element was made of it, nothing of it ran.
  expect(await page.locator("img").count()).toBe(0);
  expect(await page.evaluate(() => (window as { pwned?: unknown }).pwned)).toBeUndefined();

  // The API's refusal, word for word.
  await report.locator('input[name="epoch"]').fill("9");
  await report.getByRole("button", { name: "Release" }).click();
  const outcome = report.locator(".outcome");
  await expect
    .poll(() => outcome.textContent())
    .toMatch(
      /refused: .*epoch 9 has not been released \(released epochs: 1, 2, 3, 4\).*\(INVALID_INPUT\)$/,
    );
  expect((await api.runs.get(id)).status).toBe("quarantined");

  // A refresh rewrites nothing the operator is typing into.
  await report.locator('input[name="reason"]').fill("posted twice by hand");
  const updated = await page.locator("#updated").textContent();
  await expect
    .poll(() => page.locator("#updated").textContent(), { timeout: 10_000 })
    .not.toBe(updated);
  expect(await report.locator('input[name="reason"]').inputValue()).toBe("posted twice by hand");
  await report.getByRole("button", { name: "Give up" }).click();
  const log = page.locator("#actions li").first();
  await expect
    .poll(() => log.textContent())
    .toMatch(
      new RegExp(
        `give-up ${id}: done: given up by rewind dev@default at seq 5: .*posted twice by hand.* \\(the run is now failed\\)$`,
      ),
    );
  expect(await api.runs.get(id)).toMatchObject({ status: "failed", error: { code: "GIVEN_UP" } });
  // The refresh after the action: the run has left the list and the counts.
  await row.waitFor({ state: "detached" });
  await expect.poll(() => tile(page, "quarantined").textContent()).toBe("0");
  expect(await page.locator("#quarantine-empty").isVisible()).toBe(true);
  expect(await epoch1.locator("td[data-open]").textContent()).toBe("0");
  // Nothing failed in the page but the refused release (the browser logs every 4xx).
  const problems = (page as Page & { problems: string[] }).problems;
  expect(problems.filter((p) => !p.includes("status of 422"))).toEqual([]);
  await page.close();
});

it("releases a run; held again before the page looked, its open report is read again", async () => {
  const id = await quarantinedRun();
  const page = await open();
  // The page's reads of the list wait while `hold` is pending: it cannot see the run in between.
  let hold: Promise<void> = Promise.resolve();
  await page.route(
    (url) => url.pathname === "/v1/quarantine",
    async (route) => {
      await hold;
      await route.continue();
    },
  );
  const row = page.locator(`tr[data-run="${id}"]`);
  await row.getByRole("button", { name: "Report" }).click();
  const report = page.locator(`tr[data-report="${id}"]`);
  const history = report.locator("ul.history li");
  await expect.poll(() => history.count()).toBe(1);

  let unhold = () => {};
  hold = new Promise((resolve) => (unhold = resolve));
  await report.getByRole("button", { name: "Release" }).click();
  await expect
    .poll(() => page.locator("#actions li").first().textContent())
    .toMatch(
      new RegExp(`release ${id}: done: released by rewind dev@default onto epoch 1 at seq 5`),
    );
  // The journal still diverges: the run is held again (seq 6) before the page reads the list.
  await expect
    .poll(async () => (await api.quarantine.get(id)).history.length, { timeout: 15_000 })
    .toBe(3);
  unhold();
  await expect
    .poll(() => history.allTextContents(), { timeout: 10_000 })
    .toEqual([
      expect.stringMatching(/^seq 4 run\.quarantined /),
      expect.stringMatching(/^seq 5 run\.released .* by rewind dev@default onto epoch 1$/),
      expect.stringMatching(/^seq 6 run\.quarantined /),
    ]);
  expect(await row.getByRole("button", { name: "Hide" }).count()).toBe(1);
  expect(await row.locator("td").nth(4).textContent()).toBe("seq 2");
  await page.close();
});

it("asks for a token when the address has none, and says when the API refuses it", async () => {
  const page = await open("");
  const form = page.locator("#token-form");
  await form.waitFor();
  expect(await page.locator("#overview").count()).toBe(0);

  await page.locator("#token-input").fill("rw_not_a_token");
  await form.getByRole("button", { name: "Open" }).click();
  const problem = page.locator("#problem");
  await expect
    .poll(() => problem.textContent())
    .toMatch(/^The API refused the token: .*\(UNAUTHORIZED\)$/);
  expect(await form.isVisible()).toBe(true);
  expect(await page.evaluate(() => sessionStorage.getItem("rewind.token"))).toBeNull();

  await page.locator("#token-input").fill(platform.token);
  await form.getByRole("button", { name: "Open" }).click();
  await page.locator('#epochs tr[data-epoch="1"]').waitFor();
  expect(await problem.isHidden()).toBe(true);
  expect(await form.count()).toBe(0);
  // Every request carried the token in a header, none in the address.
  await page.reload();
  await page.locator('#epochs tr[data-epoch="1"]').waitFor();
  await page.close();
});

it("takes a #token= link opened in a tab already open, and leaves it out of the address", async () => {
  const page = await open("");
  await page.locator("#token-form").waitFor();
  // The link followed in the same tab: only the fragment changes, the page is not reloaded.
  await page.evaluate((token) => (location.hash = `#token=${token}`), platform.token);
  await page.locator('#epochs tr[data-epoch="1"]').waitFor();
  expect(await page.locator("#token-form").count()).toBe(0);
  expect(page.url()).toBe(`${platform.url}/dashboard/`);
  expect(await page.evaluate(() => sessionStorage.getItem("rewind.token"))).toBe(platform.token);
  await page.close();
});

it("fits the Overview in a narrow screen: the epochs table scrolls in its box, not the page", async () => {
  const page = await open();
  await page.setViewportSize({ width: 360, height: 740 });
  await page.locator('#epochs tr[data-epoch="1"]').waitFor();
  const widths = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    screen: window.innerWidth,
    // What sticks out of the screen, if anything: the elements outside .table-scroll boxes.
    wider: [...document.querySelectorAll("body *")]
      .filter(
        (e) =>
          e.closest(".table-scroll") === null &&
          e.getBoundingClientRect().right > window.innerWidth,
      )
      .map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className}`)
      .slice(0, 5),
  }));
  expect(widths.wider).toEqual([]);
  expect(widths.page).toBeLessThanOrEqual(widths.screen);
  // Scrolled in its box, not squeezed into it: no word is broken to fit (each header, each
  // "supported" and "unknown epoch" tag, stays on one line), so the table is wider than its box.
  const squeezed = await page.evaluate(() => {
    const table = document.querySelector<HTMLElement>("#epochs")!;
    // The lines an element's text takes: one client rectangle a line.
    const lines = (e: Element) => {
      const range = document.createRange();
      range.selectNodeContents(e);
      return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
    };
    return {
      wider: table.scrollWidth > table.parentElement!.clientWidth,
      broken: [...table.querySelectorAll("th, .tag")]
        .filter((e) => lines(e) > 1)
        .map((e) => e.textContent),
    };
  });
  expect(squeezed).toEqual({ wider: true, broken: [] });
  await page.screenshot({ path: path.join(shots, "overview-narrow.png"), fullPage: true });
  await page.close();
});

/** What the page below is given by its init script, to hold answers and make paints late. */
type Held = { hold: { waiting: (() => void)[]; asked: number; late: boolean } };

it("stops the Overview's refreshes as it leaves, even when the next paint comes late", async () => {
  const id = `run_dash_gone_${Math.random().toString(36).slice(2, 10)}`;
  await platform.store.createRun({ started: started(id, 99), ttlMs: 60_000 });
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(error.message));
  // Reads of /v1/epochs are answered when the test lets them go; while `late` is set, every
  // paint (animation frame) and short timer waits 1.5 s, as on a busy machine. Preact runs a
  // passive effect's cleanup only after the next paint: a refresh answered meanwhile found its
  // elements gone, and said so on the next page ("The page has no #statuses").
  await page.addInitScript(() => {
    const hold = { waiting: [] as (() => void)[], asked: 0, late: false };
    (window as unknown as Held).hold = hold;
    const real = window.fetch.bind(window);
    window.fetch = (input, init) => {
      const answer = real(input, init);
      const url = input instanceof Request ? input.url : input.toString();
      if (!url.endsWith("/v1/epochs")) return answer;
      hold.asked++;
      return new Promise((resolve) => hold.waiting.push(() => resolve(answer)));
    };
    const frame = window.requestAnimationFrame.bind(window);
    const timer = window.setTimeout.bind(window);
    window.requestAnimationFrame = (callback) =>
      frame((now) => (hold.late ? timer(() => callback(now), 1_500) : callback(now)));
    window.setTimeout = ((callback: () => void, ms?: number) =>
      timer(callback, hold.late && (ms ?? 0) < 100 ? 1_500 : ms)) as typeof window.setTimeout;
  });
  await page.goto(`${platform.url}/dashboard/#token=${platform.token}`);
  await expect.poll(() => page.evaluate(() => (window as unknown as Held).hold.asked)).toBe(1);
  // On to the run's page, paints late; the held answer let go as the Overview leaves.
  await page.evaluate((run) => {
    const { hold } = window as unknown as Held;
    hold.late = true;
    window.addEventListener("hashchange", () => hold.waiting.forEach((go) => go()), {
      once: true,
    });
    location.hash = `#/runs/${run}`;
  }, id);
  await page.waitForTimeout(1_000);
  await page.evaluate(() => ((window as unknown as Held).hold.late = false));
  await page.locator("#run-title").waitFor();
  // Two refresh periods: a refresh loop left running would have asked again by then.
  await page.waitForTimeout(4_500);
  expect(await page.locator("#problem").isHidden()).toBe(true);
  expect(await page.evaluate(() => (window as unknown as Held).hold.asked)).toBe(1);
  expect(problems).toEqual([]);
  await page.close();
});
