/**
 * Release after a fix, end to end, on a real Postgres and Redis: a worker with a deliberate
 * platform bug sees its runs diverge and quarantines them (never fails them, never calls a tool
 * twice); every service restarts and the quarantine holds; a fixed worker is deployed, operators
 * release runs through the API (or give up on one) and the quarantine service acts; the runs
 * complete. Then a doctored journal is caught the same way.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import type { RunFailedEntry, RunQuarantinedEntry, RunReleasedEntry } from "@rewind/core";
import { compileScript, newRunEpoch } from "@rewind/sandbox";
import { defineToolset } from "@rewind/sdk";
import { renderMetrics } from "@rewind/telemetry";
import { QuarantineService } from "../src/index.js";
import { RANDOM_BUG, startCluster, until, type Api, type Cluster } from "./harness.js";

/** The epoch the runs start in: the newest this runtime serves (2 on Node 20). */
const EPOCH = newRunEpoch();

/** How many times the outside world saw each effect: every one must be exactly once. */
const effects = new Map<string, number>();
const toolset = defineToolset("orders", {
  note: async (args: { name: string; step: number }) => {
    const key = `${args.name}:${args.step}`;
    effects.set(key, (effects.get(key) ?? 0) + 1);
    return { noted: key };
  },
});

const SCRIPT = `import { sleep, tools, waitForSignal } from "rewind";
export default async function main(input: { name: string; timer?: boolean }) {
  const r = Math.random();
  await tools.note({ name: input.name, step: 1, r });
  const go = input.timer ? (await sleep(2500), "timer") : await waitForSignal<string>("go");
  await tools.note({ name: input.name, step: 2, go });
  return { name: input.name, r, go };
}
`;

let cluster: Cluster;
let api: Api;
const ids = new Map<string, string>();
const auth = () => ({ authorization: `Bearer ${cluster.token}` });
const call = async (method: "GET" | "POST", url: string, payload?: object) => {
  const response = await api.app.inject({
    method,
    url,
    headers: auth(),
    ...(payload === undefined ? {} : { payload }),
  });
  return { status: response.statusCode, body: response.json() };
};
const status = async (name: string) => (await cluster.store.getRun(ids.get(name)!))?.status;
const journal = (name: string) => cluster.store.readJournal(ids.get(name)!);

beforeAll(async () => {
  cluster = await startCluster([toolset]);
}, 60_000);
afterAll(async () => cluster?.close(), 60_000);

describe("release after a fix", () => {
  it("a correct worker runs the runs until they wait", async () => {
    api = await cluster.startApi();
    const good = await cluster.startWorker({ name: "good" });
    const script = await compileScript({ source: SCRIPT, filename: "order.ts" });
    for (const [name, input] of [
      ["A", { name: "A" }],
      ["B", { name: "B" }],
      ["C", { name: "C" }],
      ["T", { name: "T", timer: true }],
    ] as const) {
      const created = await call("POST", "/v1/runs", {
        script: { entry: script.entry, code: script.code, sourceMap: script.sourceMap },
        input,
        toolset: "orders",
      });
      expect(created.status).toBe(201);
      ids.set(name, created.body.id);
    }
    for (const name of ids.keys())
      await until(async () => (await status(name)) === "waiting", `${name} to wait`);
    await good.close();
    expect(Object.fromEntries(effects)).toEqual({ "A:1": 1, "B:1": 1, "C:1": 1, "T:1": 1 });
  });

  it("a worker with a platform bug quarantines them: never failed, no effect twice", async () => {
    const buggy = await cluster.startWorker({ name: "buggy", bug: RANDOM_BUG });
    for (const name of ["A", "B", "C"])
      expect(
        (await call("POST", `/v1/runs/${ids.get(name)}/signals/go`, { go: true })).status,
      ).toBe(202);
    for (const name of ids.keys())
      await until(async () => (await status(name)) === "quarantined", `${name} quarantined`);
    for (const name of ids.keys()) {
      const entries = await journal(name);
      const last = entries.at(-1) as RunQuarantinedEntry;
      expect(entries.map((e) => e.kind)).toEqual([
        "run.started",
        "call",
        "call.result",
        ...(name === "T" ? ["timer.set"] : []),
        "run.quarantined",
      ]);
      expect(last.report).toMatchObject({
        reason: "divergence",
        seq: 2,
        recorded: { kind: "call", callsite: "order.ts:4:15" },
        replayed: { kind: "call", callsite: "order.ts:4:15" },
        runEpoch: EPOCH,
        workerEpochs: expect.arrayContaining([EPOCH]),
        worker: { build: "rewind test (with a platform bug)" },
      });
      expect((last.report as { replayed: { label: string } }).replayed.label).toContain("r: 0.5");
    }
    // Held: the timer that came due fires no more, the signals wait in the inbox.
    const heldAt = (await journal("T")).length;
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await journal("T")).toHaveLength(heldAt);
    for (const name of ["A", "B", "C"])
      expect((await cluster.store.pendingInbox(ids.get(name)!)).map((i) => i.name)).toEqual(["go"]);
    expect(Object.fromEntries(effects)).toEqual({ "A:1": 1, "B:1": 1, "C:1": 1, "T:1": 1 });
    const listed = await call("GET", "/v1/quarantine");
    expect(listed.body.runs.map((r: { id: string }) => r.id).sort()).toEqual(
      [...ids.values()].sort(),
    );
    await buggy.close();
  });

  it("the quarantine survives restarts of every service; a request waits for the service", async () => {
    await api.close();
    api = await cluster.startApi();
    const fixed = await cluster.startWorker({ name: "fixed" });
    await new Promise((resolve) => setTimeout(resolve, 500)); // a fixed worker alone changes nothing
    for (const name of ids.keys()) expect(await status(name)).toBe("quarantined");
    const asked = await call("POST", `/v1/quarantine/${ids.get("A")}/release?wait=0`);
    expect(asked).toMatchObject({ status: 202, body: { state: "pending" } });
    await api.close();
    await fixed.close();
    api = await cluster.startApi();
    expect((await call("GET", "/v1/quarantine")).body.runs).toHaveLength(4);
    // The gauges say so too: four quarantined runs of their epoch.
    const gauges = new QuarantineService({
      store: cluster.store,
      owner: "gauges",
      doorbell: { ring: async () => {} },
    });
    await gauges.refreshGauge();
    expect(await renderMetrics()).toMatch(
      new RegExp(`rewind_epoch_open_runs\\{epoch="${EPOCH}",status="quarantined"\\} 4`),
    );
    expect((await call("GET", `/v1/quarantine/${ids.get("A")}`)).body.current.pending).toEqual([
      expect.objectContaining({ action: "release", by: "ops-oncall@acme" }),
    ]);
  });

  it("released through the API onto a fixed worker, the runs complete, each effect once", async () => {
    await cluster.startWorker({ name: "fixed" });
    const quarantine = await cluster.startQuarantine();
    await until(async () => (await status("A")) === "completed", "A to complete");
    const released = await call("POST", `/v1/quarantine/${ids.get("B")}/release`, {});
    expect(released).toMatchObject({ status: 200, body: { action: "release", state: "done" } });
    expect(released.body.message).toContain(`released by ops-oncall@acme onto epoch ${EPOCH}`);
    await call("POST", `/v1/quarantine/${ids.get("T")}/release`, { epoch: EPOCH });
    for (const name of ["A", "B", "T"])
      await until(async () => (await status(name)) === "completed", `${name} to complete`);
    for (const name of ["A", "B", "T"]) {
      const entries = await journal(name);
      const release = entries.find((e) => e.kind === "run.released") as RunReleasedEntry;
      expect(release).toMatchObject({
        seq: name === "T" ? 6 : 5,
        by: "ops-oncall@acme",
        epoch: EPOCH,
      });
      expect(entries.at(-1)).toMatchObject({ kind: "run.completed", result: { name } });
    }
    expect((await journal("A")).map((e) => e.kind)).toEqual([
      "run.started",
      "call",
      "call.result",
      "run.quarantined",
      "run.released",
      "signal",
      "call",
      "call.result",
      "run.completed",
    ]);
    expect(Object.fromEntries(effects)).toMatchObject({ "A:2": 1, "B:2": 1, "T:2": 1 });
    for (const count of effects.values()) expect(count).toBe(1);

    // Idempotent: a second release changes nothing and says what happened.
    const again = await call("POST", `/v1/quarantine/${ids.get("A")}/release`);
    expect(again).toMatchObject({ status: 200, body: { state: "unchanged" } });
    expect(again.body.run.status).toBe("completed");
    expect(await journal("A")).toHaveLength(9);
    await quarantine.close();
  });

  it("given up: the run fails with who and why; asking again changes nothing", async () => {
    const quarantine = await cluster.startQuarantine(); // a restarted quarantine service
    const given = await call("POST", `/v1/quarantine/${ids.get("C")}/give-up`, {
      reason: "refunded by hand",
    });
    expect(given).toMatchObject({ status: 200, body: { action: "give-up", state: "done" } });
    const run = await cluster.store.getRun(ids.get("C")!);
    expect(run).toMatchObject({ status: "failed", error: { code: "GIVEN_UP" } });
    const failed = (await journal("C")).at(-1) as RunFailedEntry;
    expect(failed).toMatchObject({ kind: "run.failed", seq: 5, by: "ops-oncall@acme" });
    expect(failed.error.message).toMatch(/ops-oncall@acme gave up on this run.*refunded by hand/);
    const again = await call("POST", `/v1/quarantine/${ids.get("C")}/give-up`, { reason: "x" });
    expect(again).toMatchObject({ status: 200, body: { state: "unchanged" } });
    const release = await call("POST", `/v1/quarantine/${ids.get("C")}/release`);
    expect(release).toMatchObject({ status: 409, body: { error: { code: "CONFLICT" } } });
    expect(await journal("C")).toHaveLength(5);
    expect(effects.get("C:2")).toBeUndefined();
    await quarantine.service.refreshGauge();
    const metrics = await renderMetrics();
    expect(metrics).toMatch(/rewind_quarantine_quarantined_total\{reason="divergence"\} [1-9]/);
    expect(metrics).toContain(`rewind_quarantine_releases_total{epoch="${EPOCH}"} 3`);
    expect(metrics).toMatch(/rewind_quarantine_give_ups_total 1/);
    await quarantine.close();
  });

  it("a doctored journal is quarantined with a report naming the seq and both callsites", async () => {
    await cluster.stopWorkers();
    const worker = await cluster.startWorker({ name: "fixed" });
    const script = await compileScript({ source: SCRIPT, filename: "order.ts" });
    const created = await call("POST", "/v1/runs", {
      script: { hash: script.hash },
      input: { name: "D" },
      toolset: "orders",
    });
    ids.set("D", created.body.id);
    await until(async () => (await status("D")) === "waiting", "D to wait");
    await worker.close();
    // Someone edits the journal in the database: the recorded call's arguments change.
    const sql = new pg.Client({ connectionString: cluster.url });
    await sql.connect();
    await sql.query(
      `UPDATE rw_journal SET body = jsonb_set(body, '{argsJson}', to_jsonb($2::text))
        WHERE run_id = $1 AND seq = 2`,
      [ids.get("D"), JSON.stringify({ name: "D", r: 0.125, step: 1 })],
    );
    await sql.end();
    await cluster.startWorker({ name: "fixed" });
    await call("POST", `/v1/runs/${ids.get("D")}/signals/go`, { go: true });
    await until(async () => (await status("D")) === "quarantined", "D quarantined");
    const shown = await call("GET", `/v1/quarantine/${ids.get("D")}`);
    expect(shown.body.current).toMatchObject({
      reason: "divergence",
      divergence: {
        seq: 2,
        recorded: {
          label: 'call note({ name: "D", r: 0.125, step: 1 })',
          callsite: "order.ts:4:15",
        },
        replayed: { callsite: "order.ts:4:15" },
      },
    });
    expect(shown.body.current.message).toMatch(/diverges from its journal at seq 2/);
    expect(effects.get("D:1")).toBe(1);
    expect(effects.get("D:2")).toBeUndefined();
  });
});
