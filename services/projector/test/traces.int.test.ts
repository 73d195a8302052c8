/**
 * Traces, end to end: `rewind api`, two workers and `rewind projector` as real processes export
 * over OTLP to a real OpenTelemetry Collector the test starts. A mix of runs (tool calls, timers, a signal, a
 * failing tool, a failing run, a fork); a worker and the projector die with SIGKILL mid-test and
 * start again. Then every run has one trace with the spans the journal says (docs/traces.md),
 * each a child of the run's span, with callsites; the fork links its parent; every span reached
 * the Collector (counted from its file exporter, duplicates included), any span that arrived
 * twice arrived identical; and a backfill of one run sends the same spans again, byte for byte.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JournalEntry } from "@rewind/core";
import { compileScript } from "@rewind/sandbox";
import { openStore, type Store } from "@rewind/store";
import { traceIdOf } from "@rewind/telemetry";
import { Cluster, pause, root, until } from "../../worker/test/cluster-harness.js";
import { attribute, Collector, isError, type OtlpSpan } from "./collector.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const cluster = new Cluster({
  toolsFile: path.join(here, "../../worker/test/fixtures/metered-tools.ts"),
  env: { REWIND_LEASE_MS: "2000", REWIND_STICKY_TIMEOUT_MS: "200" },
});
const collector = new Collector();
let store: Store;

const ORDER = `import { sleep, tools } from "rewind";
export default async function main(input: { id: number }) {
  const charged = await tools.charge({ id: input.id });
  await sleep(300);
  console.log("charged", input.id);
  const waited = await tools.slow({ ms: 1500 });
  return { charged, waited };
}`;
const SIGNALLED = `import { tools, waitForSignal } from "rewind";
export default async function main(input: { id: number }) {
  const go = await waitForSignal<string>("go");
  return { go, charged: await tools.charge({ id: input.id }) };
}`;
const FAILS = `import { tools } from "rewind";
export default async function main(input: { id: number }) {
  await tools.charge({ id: input.id });
  try { await tools.decline({ id: input.id }); } catch {}
  throw new Error("out of stock");
}`;
const FIXED = `import { tools } from "rewind";
export default async function main(input: { id: number }) {
  await tools.charge({ id: input.id });
  try { await tools.decline({ id: input.id }); } catch {}
  await tools.slow({ ms: 10 });
  return "restocked";
}`;

beforeAll(async () => {
  await collector.start();
  await cluster.start();
  store = await openStore({ databaseUrl: cluster.databaseUrl });
}, 120_000);
afterAll(async () => {
  await store?.close();
  await cluster.close();
  await collector.stop();
}, 60_000);

/** The spans the journal calls for, counted from it (and its activation rows), by name. */
async function expectedNames(runId: string, journal: JournalEntry[]): Promise<string[]> {
  const sql = new pg.Client({ connectionString: cluster.databaseUrl });
  await sql.connect();
  const activations = await sql.query<{ kind: string }>(
    "SELECT kind FROM rw_activations WHERE run_id = $1",
    [runId],
  );
  await sql.end();
  const names = ["run.started", ...activations.rows.map((a) => `activation ${a.kind}`)];
  for (const entry of journal) {
    if (entry.kind === "call") names.push(`execute_tool ${entry.name}`);
    if (entry.kind === "timer.set") names.push("timer");
    if (["run.completed", "run.failed", "run.cancelled"].includes(entry.kind)) names.push("run");
  }
  return names.sort();
}

describe("traces exported to a real OpenTelemetry Collector", () => {
  it("one trace per run, every span received, re-sends and a backfill identical", async () => {
    const otel = {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpUrl,
      OTEL_SERVICE_NAME: "rewind-test",
      REWIND_PROJECTOR_POLL_MS: "50",
    };
    const workers = [await cluster.startWorker(), await cluster.startWorker()];
    let projector = await cluster.startProjector(otel);
    const compile = (source: string, i: number) =>
      compileScript({ source, filename: `script${i}.ts` });
    const [order, signalled, fails, fixed] = await Promise.all([
      compile(ORDER, 0),
      compile(SIGNALLED, 1),
      compile(FAILS, 2),
      compile(FIXED, 3),
    ]);
    const start = async (script: typeof order, id: number) =>
      (await cluster.api.runs.start({ script, input: { id }, toolset: "metered" })).id;
    const ended = (id: string, status: string) =>
      until(
        `run ${id} to be ${status}`,
        async () => (await cluster.api.runs.get(id)).status === status,
        60_000,
      );
    const orders = [await start(order, 1), await start(order, 2), await start(order, 3)];
    const waiting = await start(signalled, 4);
    const failing = await start(fails, 5);
    await ended(waiting, "waiting");
    // Visible while open: the waiting run's trace is in the backend before the run ends.
    await until(
      "the waiting run's trace to reach the Collector while it is open",
      async () => collector.trace(traceIdOf(waiting)).some((s) => s.name === "run.started"),
      30_000,
    );
    // Mid-test, while the orders' slow calls are in flight: a worker and the projector die.
    await pause(700);
    await workers[0]!.worker.kill("SIGKILL");
    await projector.service.kill("SIGKILL");
    await cluster.startWorker();
    projector = await cluster.startProjector(otel);
    await cluster.api.runs.signal(waiting, "go", "now");
    for (const id of orders) await ended(id, "completed");
    await ended(waiting, "completed");
    await ended(failing, "failed");
    const fork = (await cluster.api.runs.fork(failing, { script: fixed })).id;
    await ended(fork, "completed");
    const runs = [...orders, waiting, failing, fork];

    // Caught up: nothing committed is left for the sink.
    await until(
      "the projector to catch up",
      async () =>
        (await store.projectionCursors()).find((c) => c.sink === "otel")?.pendingRows === 0,
      60_000,
    );
    const traces = new Map<string, OtlpSpan[]>();
    for (const runId of runs) {
      const journal = await store.readJournal(runId);
      const names = await expectedNames(runId, journal);
      const spans = await until(
        `the Collector to hold run ${runId}'s ${names.length} spans`,
        async () => {
          const spans = collector.trace(traceIdOf(runId));
          return spans.length >= names.length ? spans : undefined;
        },
        30_000,
      ).catch((error: Error) => {
        const got = collector
          .trace(traceIdOf(runId))
          .map((s) => s.name)
          .sort();
        throw new Error(`${error.message}: expected ${names.join(", ")}; got ${got.join(", ")}`);
      });
      traces.set(runId, spans);
      // One trace per run, its spans the journal's, one each.
      expect(spans.map((s) => s.name).sort()).toEqual(names);
      expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([traceIdOf(runId)]));
      const runSpan = spans.find((s) => s.name === "run")!;
      expect(runSpan.parentSpanId ?? "").toBe("");
      for (const span of spans) {
        if (span === runSpan) continue;
        expect(span.parentSpanId, span.name).toBe(runSpan.spanId);
        // The script's callsite on every span that has one in the journal.
        if (span.name !== "run.started")
          expect(attribute(span, "code.file.path"), span.name).toMatch(/script\d\.ts$/);
      }
      for (const call of spans.filter((s) => s.name.startsWith("execute_tool "))) {
        expect(attribute(call, "gen_ai.operation.name")).toBe("execute_tool");
        expect(attribute(call, "gen_ai.tool.call.id")).toEqual(expect.any(String));
      }
    }
    // The orders' timers: a span from timer.set to timer.fired, which came no earlier than due
    // (the set's commit may come a little after the script's logical now, the span's start).
    for (const id of orders) {
      const timer = traces.get(id)!.find((s) => s.name === "timer")!;
      const set = (await store.readJournal(id)).find((e) => e.kind === "timer.set")!;
      const due = Date.parse(String(attribute(timer, "rewind.timer.due")));
      expect(set.kind === "timer.set" && due - set.at).toBe(300);
      expect(Number(BigInt(timer.endTimeUnixNano) / 1_000_000n)).toBeGreaterThanOrEqual(due);
      // Their outputs are events of the run's span.
      const runSpan = traces.get(id)!.find((s) => s.name === "run")!;
      expect((runSpan.events ?? []).map((e) => e.name)).toContain("rewind.output");
    }
    // The failure: a failing tool call and a failed run are error spans.
    const failed = traces.get(failing)!;
    expect(isError(failed.find((s) => s.name === "run")!)).toBe(true);
    expect(isError(failed.find((s) => s.name === "execute_tool decline")!)).toBe(true);
    // The fork links its parent's run span.
    const forkStarted = traces.get(fork)!.find((s) => s.name === "run.started")!;
    const parentRun = failed.find((s) => s.name === "run")!;
    expect(forkStarted.links).toContainEqual(
      expect.objectContaining({ traceId: parentRun.traceId, spanId: parentRun.spanId }),
    );
    // Cold activations (the killed worker's runs loaded elsewhere) are counted with replays.
    const cold = [...traces.values()].flat().filter((s) => s.name === "activation cold");
    expect(cold.length).toBeGreaterThan(0);
    for (const span of cold)
      expect(Number(attribute(span, "rewind.activation.replayed"))).toBeGreaterThan(0);

    // Every span reached the Collector; a span that arrived twice arrived identical.
    const expectedIds = new Set([...traces.values()].flat().map((s) => s.spanId));
    const received = collector.received();
    for (const id of expectedIds) expect(received.has(id), `span ${id} received`).toBe(true);
    for (const [id, arrivals] of received)
      for (const text of arrivals) expect(text, `span ${id} sent again`).toBe(arrivals[0]);

    // A backfill of one run sends its spans again: the same ids, the same bytes.
    const one = orders[0]!;
    const before = collector.received();
    const backfill = spawnSync(
      process.execPath,
      [
        path.join(root, "libs/cli/dist/main.js"),
        "projections",
        "backfill",
        "--sink",
        "otel",
        "--run",
        one,
      ],
      { env: { ...process.env, DATABASE_URL: cluster.databaseUrl, ...otel }, encoding: "utf8" },
    );
    expect(backfill.stderr).toBe("");
    expect(backfill.stdout).toContain("backfilled 1 runs");
    const ids = traces.get(one)!.map((s) => s.spanId);
    await until(
      "the backfilled spans to arrive",
      async () =>
        ids.every(
          (id) => (collector.received().get(id)?.length ?? 0) > (before.get(id)?.length ?? 0),
        ),
      30_000,
    );
    const after = collector.received();
    for (const id of ids) {
      const arrivals = after.get(id)!;
      expect(arrivals.length).toBe((before.get(id)?.length ?? 0) + 1);
      expect(arrivals.at(-1)).toBe(arrivals[0]);
    }
    // And the backend still holds one trace of the same spans for it.
    const again = collector.trace(traceIdOf(one));
    expect(new Set(again.map((s) => s.spanId))).toEqual(new Set(ids));
    // `rewind projections` shows the sink caught up.
    const status = spawnSync(
      process.execPath,
      [path.join(root, "libs/cli/dist/main.js"), "projections", "--json"],
      { env: { ...process.env, DATABASE_URL: cluster.databaseUrl }, encoding: "utf8" },
    );
    const shown = JSON.parse(status.stdout) as {
      sinks: { sink: string; pendingEntries: number }[];
    };
    expect(shown.sinks).toContainEqual(
      expect.objectContaining({ sink: "otel", pendingEntries: 0 }),
    );
  }, 240_000);
});
