/**
 * The run page's actions with a corrected script, in headless Chromium against a real
 * `rewind dev`: a failed run of a multi-file script forked after reading its preview (the fork
 * completes, its reused entries marked), a replay check of a pasted script with its verdict and
 * divergence diff, a compile error named by file and line, a fork from the keyboard alone, a
 * quarantined run's diff with both callsites then released, a read token's disabled actions,
 * and axe-core with the dialog open. Screenshots go to the folder printed.
 */
import path from "node:path";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it as vitestIt } from "vitest";
import { newSeed, type JournalEntry } from "@rewind/core";
import type { DevPlatform } from "@rewind/dev";
import { Rewind, defineToolset } from "@rewind/sdk";
import { axeViolations, screenshotDir, watchedPage } from "./browser.js";
import { startDashboard, type DashboardHarness } from "./dashboard-harness.js";

const MAIN = `import { tools } from "rewind";
import { price } from "./lib/price";

export default async function main(input: { orderId: string }) {
  const charge = await tools.charge({ orderId: input.orderId, cents: price(2) });
  const refund = price(-1);
  return { charge: charge.id, refund };
}
`;
const PRICE = `export function price(quantity: number): number {
  if (quantity < 0) throw new Error("a quantity cannot be negative");
  return quantity * 600;
}
`;
const toolset = defineToolset("till", {
  charge: async (args: { orderId: string; cents: number }) => ({ id: `ch_${args.orderId}` }),
  post: async (args: { amount: number }) => ({ posted: args.amount }),
});
const LEDGER = `import { tools, waitForSignal } from "rewind";
export default async function main(input: { amount: number }) {
  await tools.post({ amount: input.amount });
  await waitForSignal("close");
  return "closed";
}
`;

/** Browser steps are slow on a loaded machine: each test has two minutes. */
const it = (name: string, test: () => Promise<void>) => vitestIt(name, test, 120_000);

let harness: DashboardHarness | undefined;
let shots = "";
let platform: DevPlatform;
let api: Rewind;
let browser: Browser;

beforeAll(async () => {
  harness = await startDashboard("rewind-dashboard-corrected-", [toolset]);
  ({ platform, api, browser } = harness);
  shots = screenshotDir();
}, 180_000);

afterAll(async () => {
  await harness?.close();
});

/** A run of the two-file script that charges, then fails in lib/price.ts. */
async function failedRun(): Promise<string> {
  const script = await api.scripts.compile({
    entry: "main.ts",
    files: { "main.ts": MAIN, "lib/price.ts": PRICE },
  });
  const { id } = await api.runs.start({ script, toolset: "till", input: { orderId: "o-7" } });
  expect((await api.runs.result(id, "60s")).status).toBe("failed");
  return id;
}

async function openRun(
  runId: string,
  token = platform.token,
): Promise<Page & { problems: string[] }> {
  const page = await watchedPage(browser);
  await page.goto(`${platform.url}/dashboard/#token=${token}`);
  await page.evaluate((id) => (location.hash = `#/runs/${id}`), runId);
  await page.locator("#run-title").waitFor();
  return page;
}

async function openDialog(page: Page) {
  const opener = page.getByRole("button", { name: "Fork or check with a corrected script…" });
  await expect.poll(() => opener.isEnabled()).toBe(true);
  await opener.click();
  const dialog = page.getByRole("dialog");
  await dialog.waitFor();
  return dialog;
}

/** The lines of a diff's part, as shown. */
async function lines(locator: Locator): Promise<string[]> {
  return (await locator.allInnerTexts()).map((text) => text.trimEnd());
}

/** Presses Tab until the focused element's text is `name` (at most 60 times), then Enter. */
async function tabTo(page: Page, name: string) {
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press("Tab");
    const focused = await page.evaluate(() => document.activeElement?.textContent?.trim() ?? "");
    if (focused === name) return page.keyboard.press("Enter");
  }
  throw new Error(`Tab never reached "${name}"`);
}

it("forks a failed run of a multi-file script after reading its preview; the fork completes, reused entries marked", async () => {
  const runId = await failedRun();
  const page = await openRun(runId);
  const dialog = await openDialog(page);
  // Both files of the script, as the run ran them, ready to edit.
  const main = dialog.getByRole("textbox", { name: "main.ts (entry)" });
  expect(await main.inputValue()).toBe(MAIN);
  expect(await dialog.getByRole("textbox", { name: "lib/price.ts" }).inputValue()).toBe(PRICE);
  await main.fill(MAIN.replace("price(-1)", "price(1)"));
  await dialog.getByRole("button", { name: "Preview fork with it" }).click();
  const preview = dialog.getByRole("region", { name: "Fork preview" });
  await preview.waitFor({ timeout: 30_000 });
  // The charge and its result are reused; the corrected ending runs live.
  expect(await preview.textContent()).toContain(
    "Reuses 2 entries; runs live from #4 run.completed",
  );
  await expect
    .poll(() => dialog.locator(".verdict").getAttribute("data-verdict"), { timeout: 30_000 })
    .toBe("fixes-failure");
  expect(await axeViolations(page)).toEqual([]);
  await page.screenshot({ path: path.join(shots, "corrected-fork-preview.png"), fullPage: true });

  await preview.getByRole("button", { name: "Fork with the corrected script" }).click();
  await expect.poll(() => page.url(), { timeout: 20_000 }).not.toContain(runId);
  const fork = decodeURIComponent(page.url().split("#/runs/")[1]!);
  expect((await api.runs.result(fork, "30s")).status).toBe("completed");
  await expect
    .poll(() => page.locator(".run-header .status").textContent(), { timeout: 20_000 })
    .toBe("completed");
  const origin = page.locator(".fork-origin");
  await origin.locator("li.reused").first().waitFor();
  expect(await origin.locator("h3").textContent()).toBe(`Forked from ${runId}: 2 reused entries`);
  expect(await origin.locator("li.reused").allTextContents()).toEqual([
    "reused #2 call charge",
    "reused #3 result of #2",
  ]);
  expect(await origin.locator("li.live").textContent()).toContain("#4 run.completed");
  // Marked in the journal too: the two reused rows, not the live ending.
  await expect
    .poll(() =>
      page.locator("ol.entries li.reused").evaluateAll((rows) => rows.map((r) => r.dataset.seq)),
    )
    .toEqual(["2", "3"]);
  expect(await page.locator('ol.entries li[data-seq="2"] .badge').textContent()).toBe("reused");
  expect((await api.runs.get(fork)).result).toEqual({ charge: "ch_o-7", refund: 600 });
  // Forked with no `at`: it went live at the first difference, and its header says so.
  expect(await page.locator(".run-header dl").textContent()).toContain(
    `forked from${runId}, live from the first difference`,
  );
  await page.screenshot({ path: path.join(shots, "corrected-fork-completed.png"), fullPage: true });
  expect(page.problems).toEqual([]);
  await page.close();
});

it("checks a corrected pasted script: its verdict, and the divergence diff with both callsites", async () => {
  const runId = await failedRun();
  const page = await openRun(runId);
  const dialog = await openDialog(page);
  // A compile error is named by file, line and column, beside its file.
  await dialog
    .getByRole("textbox", { name: "lib/price.ts" })
    .fill(
      `import { readFileSync } from "node:fs";\nexport const secret = () => readFileSync("/etc/passwd", "utf8");\n${PRICE}`,
    );
  await dialog.getByRole("button", { name: "Check replay" }).click();
  const problems = dialog.locator('[data-file="lib/price.ts"] ul.compile-problems');
  await expect
    .poll(() => dialog.locator(".outcome").textContent(), { timeout: 30_000 })
    .toContain("replay check refused: The script main.ts does not compile");
  await problems.waitFor();
  expect(await problems.textContent()).toMatch(
    /^lib\/price\.ts:1:\d+ "node:fs" is not one of the submitted files/,
  );

  // Pasted over: a script that charges three instead of two diverges at the charge.
  await dialog.getByRole("textbox", { name: "lib/price.ts" }).fill(PRICE);
  await dialog
    .getByRole("textbox", { name: "main.ts (entry)" })
    .fill(MAIN.replace("price(2)", "price(3)"));
  await dialog.getByRole("button", { name: "Check replay" }).click();
  await expect
    .poll(() => dialog.locator(".verdict").getAttribute("data-verdict"), { timeout: 30_000 })
    .toBe("incompatible");
  const diff = dialog.locator("section.divergence");
  await diff.waitFor();
  expect(await diff.locator("h3").textContent()).toContain("Divergence at #2");
  const recorded = diff.locator('.callsite[data-side="recorded"]');
  const replayed = diff.locator('.callsite[data-side="replayed"]');
  expect(await recorded.locator(".source-line").textContent()).toContain(
    "5   const charge = await tools.charge({ orderId: input.orderId, cents: price(2) });",
  );
  expect(await replayed.locator(".source-line").textContent()).toContain("cents: price(3) });");
  expect(await recorded.textContent()).toContain("main.ts:5:");
  expect(await replayed.textContent()).toContain("main.ts:5:");
  // The argument diff, whole values: 1200 recorded, 1800 now.
  const args = diff.getByLabel("argument diff");
  expect(await lines(args.locator(".removed"))).toEqual(['-   "cents": 1200,']);
  expect(await lines(args.locator(".added"))).toEqual(['+   "cents": 1800,']);
  // Side by side: #2 is the first mismatch.
  expect(await diff.locator("tr.mismatch").getAttribute("data-seq")).toBe("2");
  expect(await diff.locator("tr.mismatch").textContent()).toContain("first mismatch");
  // The source diff between the two versions: one line of main.ts.
  const source = diff.locator('figure.source-diff[data-file="main.ts"]');
  expect(await source.locator(".removed").count()).toBe(1);
  expect(await source.locator(".added").textContent()).toContain("price(3)");
  expect(await diff.locator('figure.source-diff[data-file="lib/price.ts"]').count()).toBe(0);
  expect(await axeViolations(page)).toEqual([]);
  await page.screenshot({ path: path.join(shots, "corrected-replay-dialog.png"), fullPage: true });
  // The dialog scrolls inside itself: the diff is shot whole on its own.
  await diff.screenshot({ path: path.join(shots, "corrected-replay-diff.png") });
  await page.keyboard.press("Escape");
  await dialog.waitFor({ state: "detached" });
  expect(page.problems.filter((p) => !p.includes("422"))).toEqual([]);
  await page.close();
});

it("checks corrected files uploaded: price.ts replaces lib/price.ts", async () => {
  const runId = await failedRun();
  const page = await openRun(runId);
  const dialog = await openDialog(page);
  const fixed = PRICE.replace('throw new Error("a quantity cannot be negative")', "return 0");
  await dialog
    .getByLabel(/^Upload files/)
    .setInputFiles([{ name: "price.ts", mimeType: "text/plain", buffer: Buffer.from(fixed) }]);
  const price = dialog.getByRole("textbox", { name: "lib/price.ts" });
  await expect.poll(() => price.inputValue()).toBe(fixed);
  expect(await dialog.locator(".script-file").count()).toBe(2); // replaced, not added
  await dialog.getByRole("button", { name: "Check replay" }).click();
  await expect
    .poll(() => dialog.locator(".verdict").getAttribute("data-verdict"), { timeout: 30_000 })
    .toBe("fixes-failure");
  // Where it failed it now completes: the diff names the failure and the new ending.
  const diff = dialog.locator("section.divergence");
  expect(await diff.locator(".callsite[data-side=recorded] .label").textContent()).toBe(
    "run.failed: Error: a quantity cannot be negative",
  );
  expect(await diff.locator(".callsite[data-side=replayed] .label").textContent()).toContain(
    "run.completed with",
  );
  // The failure's line: where it was thrown, from its source-mapped stack.
  expect(await diff.locator(".callsite[data-side=recorded] .source-line").textContent()).toBe(
    '2   if (quantity < 0) throw new Error("a quantity cannot be negative");',
  );
  expect(await lines(diff.getByLabel("values diff").locator(".added"))).toContain(
    '+   "refund": 0',
  );
  expect(await lines(diff.locator('figure.source-diff[data-file="lib/price.ts"] .added'))).toEqual([
    "+   if (quantity < 0) return 0;",
  ]);
  await diff.screenshot({ path: path.join(shots, "corrected-upload-diff.png") });
  expect(page.problems).toEqual([]);
  await page.close();
});

it("forks with a corrected script using the keyboard alone", async () => {
  const runId = await failedRun();
  const page = await openRun(runId);
  await tabTo(page, "Fork or check with a corrected script…");
  const dialog = page.getByRole("dialog");
  await dialog.waitFor();
  // Into the entry file's text box, and the fix typed there.
  await tabTo(page, "");
  await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("file-main_ts");
  // The whole corrected file typed in at once (key by key would be slow), over the old one.
  await page.keyboard.press("Control+A");
  await page.keyboard.insertText(MAIN.replace("price(-1)", "price(1)"));
  await tabTo(page, "Preview fork with it");
  await dialog.getByRole("region", { name: "Fork preview" }).waitFor({ timeout: 30_000 });
  await tabTo(page, "Fork with the corrected script");
  await expect.poll(() => page.url(), { timeout: 20_000 }).not.toContain(runId);
  const fork = decodeURIComponent(page.url().split("#/runs/")[1]!);
  expect((await api.runs.result(fork, "30s")).status).toBe("completed");
  expect(page.problems).toEqual([]);
  await page.close();
});

/**
 * A run whose journal recorded tools.post with other arguments (the way a platform fault shows
 * up): its cold replay diverges at seq 2 and the worker holds it.
 */
async function quarantinedRun(
  source = LEDGER,
  recorded: (runId: string, at: number) => JournalEntry[] = (runId, at) => [
    {
      seq: 2,
      kind: "call",
      at,
      callsite: "ledger.ts:3:15",
      name: "post",
      args: { amount: 99 },
      callId: `${runId}/2`,
    },
    { seq: 3, kind: "call.result", at, callSeq: 2, result: { posted: 99 } },
  ],
): Promise<string> {
  const script = await api.scripts.compile({ entry: "ledger.ts", files: { "ledger.ts": source } });
  await platform.store.putScript("default", script);
  const runId = `run_diff_${Math.random().toString(36).slice(2, 10)}`;
  const at = Date.now();
  const { store } = platform;
  await store.createRun({
    started: {
      seq: 1,
      kind: "run.started",
      at,
      runId,
      scriptHash: script.hash,
      input: { amount: 10 },
      seed: newSeed(),
      epoch: (await api.epochs()).current,
      toolset: "till",
      namespace: "default",
    },
    ttlMs: 600_000,
  });
  const lease = (await store.acquireLease(runId, "recorder", 30_000))!;
  await store.commit([
    {
      lease,
      afterSeq: 1,
      entries: recorded(runId, at),
      status: "waiting",
    },
  ]);
  await store.releaseLease(lease);
  await api.runs.signal(runId, "close"); // rings: the run is loaded cold, replayed, held
  await expect
    .poll(async () => (await api.runs.get(runId)).status, { timeout: 30_000 })
    .toBe("quarantined");
  return runId;
}

it("shows a quarantined run's diff with both callsites, names its script by file, and releases it", async () => {
  const runId = await quarantinedRun();
  const page = await openRun(runId);
  const panel = page.locator("section.quarantine-panel");
  await panel.waitFor();
  expect(await panel.locator(".script-name").textContent()).toBe("ledger.ts");
  const diff = panel.locator("section.divergence");
  await diff.waitFor();
  // The replay check of its own script completes the report with what the script emits now.
  await expect
    .poll(() => lines(diff.getByLabel("argument diff").locator(".added")), {
      timeout: 30_000,
    })
    .toEqual(['+   "amount": 10']);
  expect(await lines(diff.getByLabel("argument diff").locator(".removed"))).toEqual([
    '-   "amount": 99',
  ]);
  const lineOf = (side: string) =>
    diff.locator(`.callsite[data-side="${side}"] .source-line`).textContent();
  expect(await lineOf("recorded")).toContain("3   await tools.post({ amount: input.amount });");
  expect(await lineOf("replayed")).toContain("3   await tools.post({ amount: input.amount });");
  expect(await diff.locator(".source-same").count()).toBe(1);
  expect(await diff.locator("tr.mismatch").getAttribute("data-seq")).toBe("2");
  expect(await axeViolations(page)).toEqual([]);
  await page.screenshot({ path: path.join(shots, "quarantine-diff.png"), fullPage: true });

  await diff.getByRole("button", { name: "Release" }).click();
  await expect
    .poll(() => panel.locator(".outcome").textContent(), { timeout: 30_000 })
    .toMatch(/^release: /);
  await expect
    .poll(async () => (await api.quarantine.get(runId)).history.map((e) => e.kind), {
      timeout: 20_000,
    })
    .toContain("run.released");
  // Released onto the same runtime, it diverges again and is held again; the Overview names
  // its script by its file, not its hash.
  await expect
    .poll(async () => (await api.quarantine.get(runId)).quarantined, { timeout: 30_000 })
    .toBe(true);
  await page.evaluate(() => (location.hash = "#/"));
  const row = page.locator(`#quarantine tr[data-run="${runId}"]`);
  await row.waitFor({ timeout: 30_000 });
  const scriptCell = row.locator("td").nth(1);
  expect(await scriptCell.textContent()).toBe("ledger.ts till"); // file and toolset
  expect(await scriptCell.getAttribute("title")).toMatch(/^sha256:/); // the hash on hover
  expect(page.problems).toEqual([]);
  await page.close();
});

it("forks a quarantined run from its last matching entry", async () => {
  // It posts twice; the journal recorded other arguments for the second post only.
  const twice = LEDGER.replace(
    "  await waitForSignal",
    "  await tools.post({ amount: input.amount * 2 });\n  await waitForSignal",
  );
  const runId = await quarantinedRun(twice, (id, at) => [
    {
      seq: 2,
      kind: "call",
      at,
      callsite: "ledger.ts:3:15",
      name: "post",
      args: { amount: 10 },
      callId: `${id}/2`,
    },
    { seq: 3, kind: "call.result", at, callSeq: 2, result: { posted: 10 } },
    {
      seq: 4,
      kind: "call",
      at,
      callsite: "ledger.ts:4:15",
      name: "post",
      args: { amount: 99 },
      callId: `${id}/4`,
    },
    { seq: 5, kind: "call.result", at, callSeq: 4, result: { posted: 99 } },
  ]);
  const page = await openRun(runId);
  const diff = page.locator("section.quarantine-panel section.divergence");
  await diff.waitFor();
  expect(await diff.getAttribute("data-seq")).toBe("4");
  await diff.getByRole("button", { name: "Fork from #3, the last matching entry" }).click();
  await expect.poll(() => page.url(), { timeout: 20_000 }).not.toContain(runId);
  const fork = decodeURIComponent(page.url().split("#/runs/")[1]!);
  expect((await api.runs.get(fork)).parent).toEqual({ runId, seq: 4 });
  await expect
    .poll(() => page.locator(".run-header dl").textContent())
    .toContain(`forked from${runId}, live from #4 at the latest`);
  const origin = page.locator(".fork-origin");
  await origin.locator("li.live").waitFor({ timeout: 30_000 });
  expect(await origin.locator("li.reused").allTextContents()).toEqual([
    "reused #2 call post",
    "reused #3 result of #2",
  ]);
  // Live from #4: the second post is made again, with the arguments the script computes now.
  await expect
    .poll(async () => (await api.runs.get(fork)).status, { timeout: 30_000 })
    .toBe("waiting");
  const entries = (await api.runs.journal(fork)).entries;
  expect(entries.find((e) => e.seq === 4)).toMatchObject({ kind: "call", args: { amount: 20 } });
  expect(page.problems).toEqual([]);
  await page.close();
});

it("shows a read token the actions disabled, with the reason", async () => {
  const runId = await failedRun();
  const reader = await platform.store.createToken("default", "viewer", ["read"]);
  const page = await openRun(runId, reader);
  const reason = page.locator("#actions-refused");
  await reason.waitFor();
  expect(await reason.textContent()).toBe(
    'Acting on a run needs a token with the "run" scope; this one (viewer@default) has read.',
  );
  for (const name of ["Fork or check with a corrected script…", "Preview fork", "Replay check"])
    expect(await page.getByRole("button", { name }).isDisabled()).toBe(true);
  expect(await axeViolations(page)).toEqual([]);
  await page.screenshot({ path: path.join(shots, "corrected-read-token.png"), fullPage: true });
  expect(page.problems).toEqual([]);
  await page.close();
});
