/**
 * The capture policy end to end on the embedded platform (docs/capture-policy.md): a card number
 * in a tool's result and a bearer token in a tool's arguments never reach rw_journal (read
 * directly), while the script and the tool had the real values; the run says it is not strictly
 * replayable; a fork reusing the redacted entry is refused, one before it works; a cold load
 * after a restart quarantines the run, naming the seq and rule; another namespace's runs are
 * untouched by the policy and cannot read it; a policy that does not parse is refused. The
 * run's trace spans (a projection of the journal) hold neither secret.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { defineToolset } from "@rewind/core";
import { compileScript, type CompiledScript } from "@rewind/sandbox";
import { Rewind, RewindApiError } from "@rewind/sdk";
import { openSqlClient } from "@rewind/store";
import { loadRunView, spansOf } from "@rewind/projector";
import { startDevPlatform, type DevPlatform } from "../src/index.js";

const CARD = "4242 4242 4242 4242";
const KEY = "s3cr3tTOKENvalue0123456789";
const seen: { authorization: string[]; lengths: number[] } = { authorization: [], lengths: [] };
const toolset = defineToolset("shop", {
  lookup: async () => ({ number: CARD, holder: "Ann" }),
  charge: async (args: { headers: { authorization: string }; cents: number }) => {
    seen.authorization.push(args.headers.authorization);
    return { receipt: "r-1" };
  },
  report: async (args: { length: number }) => {
    seen.lengths.push(args.length);
    return null;
  },
});
// seq 2 call lookup, 3 its result (card), 4 call charge (token), 5 its result, 6 call report,
// 7 its result, 8 output (card), then a wait for a signal.
const source = `import { tools, waitForSignal } from "rewind";
export default async function main(input: { key: string }) {
  const card = await tools.lookup({ id: 1 });
  await tools.charge({ headers: { authorization: "Bearer " + input.key }, cents: 100 });
  await tools.report({ length: card.number.length });
  console.log("charged", card.number);
  await waitForSignal("go");
  return { charged: true };
}`;

let dir: string;
let script: CompiledScript;
let platform: DevPlatform | undefined;
let other: string; // a token of another namespace
const ids = { redacted: "", plain: "" };
const start = async () => {
  platform = await startDevPlatform({ port: 0, dataDir: dir, toolsets: [toolset] });
  other ??= await platform.store.createToken("tenant-b", "test");
  return new Rewind({ url: platform.url, token: platform.token });
};
const stop = async () => {
  await platform?.close();
  platform = undefined;
};
const until = async (check: () => Promise<boolean>) => {
  for (let i = 0; i < 400 && !(await check()); i++) await new Promise((r) => setTimeout(r, 50));
  expect(await check()).toBe(true);
};
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "rewind-capture-"));
  script = await compileScript({ source, filename: "shop.ts" });
});
afterAll(async () => {
  await stop();
  rmSync(dir, { recursive: true, force: true });
});

it("keeps a card number and a bearer token out of the journal, and says the run is not strictly replayable", async () => {
  const api = await start();
  const b = new Rewind({ url: platform!.url, token: other });
  await api.capturePolicy.set({ detectors: ["card-number"] });
  await api.capturePolicy.set({ toolset: "shop", fields: ["$.headers.authorization"] });
  expect(await api.capturePolicy.get({ toolset: "shop" })).toMatchObject({
    namespace: "default",
    toolset: "shop",
    fields: ["$.headers.authorization"],
  });
  // Tenant B sees its own (empty) policy, never A's; its run of the same script is not redacted.
  expect(await b.capturePolicy.get({ toolset: "shop" })).toMatchObject({
    namespace: "tenant-b",
    fields: [],
    detectors: [],
  });

  const { id } = await api.runs.start({ script, toolset: "shop", input: { key: KEY } });
  const { id: plain } = await b.runs.start({ script, toolset: "shop", input: { key: KEY } });
  await until(async () => (await api.runs.get(id)).status === "waiting");
  await until(async () => (await b.runs.get(plain)).status === "waiting");
  // The tool got the real token, the script the real card (its length reported live).
  expect(seen.authorization).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`]);
  expect(seen.lengths).toEqual([CARD.length, CARD.length]);

  const entries = (await api.runs.journal(id)).entries;
  expect(entries[2]).toMatchObject({
    seq: 3,
    kind: "call.result",
    result: { number: "[redacted:card-number]", holder: "Ann" },
    redacted: ["card-number"],
  });
  expect(entries[3]).toMatchObject({
    seq: 4,
    kind: "call",
    args: { headers: { authorization: { $redacted: "$.headers.authorization" } }, cents: 100 },
    redacted: ["$.headers.authorization"],
  });
  expect(entries[7]).toMatchObject({ kind: "output", text: "charged [redacted:card-number]\n" });
  expect(entries[5]).not.toHaveProperty("redacted");
  expect(await api.runs.get(id)).toMatchObject({
    replayable: "not-strict",
    firstRedacted: { seq: 3, rules: ["card-number"] },
  });
  Object.assign(ids, { redacted: id, plain });
  const bEntries = (await b.runs.journal(plain)).entries;
  expect(bEntries[2]).toMatchObject({ result: { number: CARD } });
  expect(await b.runs.get(plain)).toMatchObject({ replayable: "strict" });

  // A fork reusing seq 3 would hand its script the marker: refused, naming it.
  const refused = await api.runs.fork(id, { script }).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(RewindApiError);
  expect(refused).toMatchObject({ status: 409, code: "CONFLICT", field: "body.at" });
  expect((refused as Error).message).toMatch(/entry 3 .*card-number.*--at 3/);
  // Before it, it runs live: the lookup is called again and answers the fork's script.
  const fork = await api.runs.fork(id, { script, at: 3 });
  expect(fork.preview.reused).toBe(1);
  await until(async () => (await api.runs.get(fork.id)).status === "waiting");
  expect(seen.lengths).toEqual([CARD.length, CARD.length, CARD.length]);
  await stop();

  // At rest, read from the table: no card number, no token, for namespace A's runs.
  const sql = await openSqlClient({ dataDir: dir });
  try {
    const rows = await sql.query<{ run_id: string; text: string }>(
      `SELECT j.run_id, j.body::text AS text FROM rw_journal j JOIN rw_runs r ON r.id = j.run_id
       WHERE r.namespace = 'default'
       UNION ALL SELECT i.run_id, coalesce(v.body, '') FROM rw_inbox i JOIN rw_values v ON v.ref = i.payload_ref`,
    );
    const stored = rows.map((r) => r.text).join("\n");
    expect(stored).toContain("[redacted:card-number]");
    expect(stored).toContain("$redacted");
    expect(stored).not.toContain(CARD);
    expect(stored).not.toContain(CARD.replaceAll(" ", ""));
    expect(stored).not.toContain(`Bearer ${KEY}`);
    // The input was redacted at the door? No rule names it: the key alone is no card or token.
    const b = await sql.query<{ text: string }>(
      `SELECT body::text AS text FROM rw_journal WHERE run_id = $1`,
      [plain],
    );
    expect(b.map((r) => r.text).join("\n")).toContain(CARD);
  } finally {
    await sql.close();
  }
}, 120_000);

it("quarantines the run when a cold load would need the redacted value, naming seq and rule", async () => {
  const api = await start();
  const b = new Rewind({ url: platform!.url, token: other });
  const id = ids.redacted;
  // Its restart alone loads it cold (it waits on a signal, with nothing in memory): held at once.
  await until(async () => (await api.runs.get(id)).status === "quarantined");
  const detail = await api.quarantine.get(id);
  expect(detail.report).toMatchObject({ reason: "not-replayable", seq: 3, rules: ["card-number"] });
  expect(detail.report?.message).toMatch(/not strictly replayable.*entry 3.*card-number/);
  // A release would only hold it again: refused, saying what works; giving up does.
  await expect(api.quarantine.release(id)).rejects.toMatchObject({
    status: 409,
    message: expect.stringMatching(/entry 3 .*give-up/),
  });
  await api.quarantine.giveUp(id, { reason: "redacted card" });
  await until(async () => (await api.runs.get(id)).status === "failed");
  // The spans the projector makes of the ended run (a projection of its journal, its output
  // as events) hold neither secret.
  const view = (await loadRunView(platform!.store, id))!;
  const spans = JSON.stringify(
    spansOf(
      view,
      view.journal.map((e) => e.seq),
      [],
    ),
  );
  expect(spans).toContain("charged [redacted:card-number]");
  expect(spans).not.toContain(CARD);
  expect(spans).not.toContain(KEY);
  // Tenant B's run had nothing redacted: it replays and completes.
  await b.runs.signal(ids.plain, "go", null);
  expect(await b.runs.result(ids.plain, "30s")).toMatchObject({ status: "completed" });
}, 120_000);

it("refuses a policy that does not parse, naming the field, and a read token's change", async () => {
  const api = await start();
  const refusal = (policy: unknown) =>
    api.capturePolicy.set(policy as never).then(
      () => undefined,
      (e: RewindApiError) => ({ status: e.status, field: e.field, message: e.message }),
    );
  expect(await refusal({ fields: ["card.number"] })).toMatchObject({
    status: 422,
    field: "body.fields.0",
    message: expect.stringMatching(/must start with "\$"/),
  });
  expect(await refusal({ fields: ["$.a[?(@.x)]"] })).toMatchObject({ field: "body.fields.0" });
  expect(await refusal({ detectors: ["passport"] })).toMatchObject({ field: "body.detectors.0" });
  expect(await refusal({ patterns: [{ name: "x", regex: "(unclosed" }] })).toMatchObject({
    field: "body.patterns.0.regex",
    message: expect.stringMatching(/not a valid regular expression/),
  });
  expect(await refusal({ patterns: [{ name: "email", regex: "x" }] })).toMatchObject({
    field: "body.patterns.0.name",
  });
  const reader = await platform!.store.createToken("default", "reader", ["read"]);
  const readOnly = new Rewind({ url: platform!.url, token: reader });
  expect(await readOnly.capturePolicy.get()).toMatchObject({ detectors: ["card-number"] });
  await expect(readOnly.capturePolicy.set({ detectors: [] })).rejects.toMatchObject({
    status: 403,
  });
}, 60_000);
