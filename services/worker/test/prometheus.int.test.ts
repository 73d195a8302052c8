/**
 * The metrics, end to end: `rewind api`, two workers and the quarantine service as real
 * processes, scraped by a real Prometheus, run a mix of runs (tool calls, timers, signals, a
 * failing tool, a failing run, a fork, workers killed with SIGKILL, a quarantine given up, a
 * backlog while the workers are frozen). Then promtool check metrics passes on every /metrics,
 * and every query of every Grafana dashboard returns what the test did: the counts of runs,
 * calls, entries, failures and quarantines exactly, the rest by the series it should show.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LIMIT_NAMES } from "@rewind/core";
import { compileScript, newRunEpoch } from "@rewind/sandbox";
import { openStore } from "@rewind/store";
import { traceIdOf } from "@rewind/telemetry";
import { DASHBOARDS } from "../../../deploy/grafana/test/dashboards.js";

type Six<T> = [T, T, T, T, T, T];
import { Cluster, pause, until } from "./cluster-harness.js";
import { expectations, type Did } from "./dashboard-expectations.js";
import { Prometheus, SCRAPE_SECONDS, promtoolCheck } from "./prometheus.js";
import { attribute, Collector, isError } from "../../projector/test/collector.js";
import { Receiver } from "../../projector/test/webhook-receiver.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const cluster = new Cluster({
  toolsFile: path.join(here, "fixtures/metered-tools.ts"),
  env: {
    REWIND_LEASE_MS: "2000",
    REWIND_STICKY_TIMEOUT_MS: "200",
    // The webhook receiver listens on loopback: the API and the dispatcher must allow it.
    REWIND_WEBHOOK_ALLOW: "127.0.0.1",
  },
});
const prometheus = new Prometheus();
/** Answers 500 to an event's first attempt, 200 to the next: one retry each. */
const receiver = new Receiver(7241);
const collector = new Collector();
const firstSeen = new Set<string>();
receiver.answer = (_path, id) => (firstSeen.has(id) ? 200 : (firstSeen.add(id), 500));
let projectorUrl = "";

const ORDER = `import { sleep, tools } from "rewind";
export default async function main(input: { id: number }) {
  const charged = await tools.charge({ id: input.id });
  await sleep(300);
  const waited = await tools.slow({ ms: 200 });
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
  throw new Error("out of stock");
}`;
const FIXED = `import { tools } from "rewind";
export default async function main(input: { id: number }) {
  await tools.charge({ id: input.id });
  // Live after the reused charge: a fork that ends right where its reuse ends is journaled
  // without its verdict today (run.completed missing; reported), so this one goes on live.
  await tools.slow({ ms: 10 });
  return "restocked";
}`;
const DECLINED = `import { tools } from "rewind";
export default async function main(input: { id: number }) {
  try {
    return await tools.decline({ id: input.id });
  } catch {
    return "declined";
  }
}`;
/** Charges, then waits: its journal is edited while it waits, so its replay diverges. */
const DOCTORED = `import { tools, waitForSignal } from "rewind";
export default async function main(input: { id: number }) {
  await tools.charge({ id: input.id });
  return await waitForSignal<string>("go");
}`;

const hosts: { worker: string[]; all: string[] } = { worker: [], all: [] };
let started = 0;

async function startWorker() {
  const { worker, healthUrl } = await cluster.startWorker({ health: true });
  await prometheus.scrape("worker", healthUrl!);
  hosts.worker.push(new URL(healthUrl!).host);
  hosts.all.push(new URL(healthUrl!).host);
  return { worker, healthUrl: healthUrl! };
}

beforeAll(async () => {
  started = Date.now() / 1000;
  await cluster.start();
  await prometheus.start({ bearerToken: cluster.metricsToken });
  await prometheus.scrape("api", cluster.apiUrl);
  const quarantine = await cluster.startQuarantineService();
  await prometheus.scrape("quarantine", quarantine.healthUrl);
  hosts.all.push(new URL(cluster.apiUrl).host, new URL(quarantine.healthUrl).host);
  await receiver.start();
  await collector.start();
  const projector = await cluster.startProjector({
    REWIND_PROJECTOR_POLL_MS: "50",
    REWIND_WEBHOOK_RETRY_MS: "200",
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpUrl,
  });
  projectorUrl = projector.healthUrl;
  await prometheus.scrape("projector", projectorUrl);
}, 90_000);
afterAll(async () => {
  await receiver.stop();
  await collector.stop();
  await prometheus.stop();
  await cluster.close();
}, 60_000);

describe("metrics scraped by a real Prometheus", () => {
  it("every dashboard query returns what the cluster did", async () => {
    const workers = [await startWorker(), await startWorker()];
    await cluster.api.webhooks.create({
      url: receiver.url("/hook"),
      events: ["run.completed", "run.failed"],
    });
    // Every process scraped once before any run: its series start at 0 in Prometheus.
    await prometheus.scrapedAfter(Date.now());
    const sources = [ORDER, SIGNALLED, FAILS, FIXED, DECLINED, DOCTORED] as const;
    const compiled = await Promise.all(
      sources.map((source, i) => compileScript({ source, filename: `script${i}.ts` })),
    );
    const [order, signalled, fails, fixed, declined, doctored] = compiled as Six<
      (typeof compiled)[number]
    >;
    const start = async (script: typeof order, id: number) =>
      (await cluster.api.runs.start({ script, input: { id }, toolset: "metered" })).id;
    const ended = async (id: string, status: string) =>
      until(
        `run ${id} to be ${status}`,
        async () => (await cluster.api.runs.get(id)).status === status,
        30_000,
      );

    const orders = [
      await start(order, 1),
      await start(order, 2),
      await start(order, 3),
      await start(order, 4),
    ];
    const waiting = [await start(signalled, 5), await start(signalled, 6)];
    const failing = await start(fails, 7);
    const decline = await start(declined, 8);
    const edited = await start(doctored, 9);
    await expect(cluster.api.runs.get("run_does_not_exist")).rejects.toThrow(); // a 404
    for (const id of orders) await ended(id, "completed");
    await ended(failing, "failed");
    await ended(decline, "completed");
    const fork = (await cluster.api.runs.fork(failing, { script: fixed })).id;
    await ended(fork, "completed");
    for (const id of [...waiting, edited]) await ended(id, "waiting");

    // Three runs wait, hot in the workers.
    const quiet = Date.now();
    await prometheus.scrapedAfter(quiet);
    // A second 404, after the first was scraped: a series first seen at 1 shows no rate until it moves.
    await expect(cluster.api.runs.get("run_does_not_exist")).rejects.toThrow();
    const hotWhileWaiting = await prometheus.query(
      "sum(rewind_executor_hot_runs)",
      quiet / 1000 + 1,
    );
    // With three runs open, a limit of three refuses the next start (429), then is lifted.
    await cluster.api.limits.set({ runsInFlight: 3 });
    await expect(start(order, 99)).rejects.toThrow(/LIMIT_EXCEEDED|runs in flight|limit/i);
    await cluster.api.limits.set({ runsInFlight: null });

    // Someone edits a waiting run's journal; both workers die with SIGKILL (every count of theirs
    // scraped first) and two new ones replay the waiting runs cold when signalled.
    const sql = new pg.Client({ connectionString: cluster.databaseUrl });
    await sql.connect();
    await sql.query(
      `UPDATE rw_journal SET body = jsonb_set(body, '{argsJson}', to_jsonb($2::text)) WHERE run_id = $1 AND seq = 2`,
      [edited, JSON.stringify({ id: 90 })],
    );
    await sql.end();
    // Scraped a while longer, unchanged: increase() extrapolates a series by up to half a scrape
    // interval past its last sample, a small share of a longer series (the counts are rounded).
    await pause(5_000);
    const beforeKill = Date.now();
    await prometheus.scrapedAfter(beforeKill);
    for (const { worker, healthUrl } of workers) {
      await worker.kill("SIGKILL");
      await prometheus.forget("worker", healthUrl);
    }
    const replacements = [await startWorker(), await startWorker()];
    await prometheus.scrapedAfter(
      Date.now(),
      replacements.map((w) => new URL(w.healthUrl).host),
    );
    for (const id of waiting) await cluster.api.runs.signal(id, "go", "now");
    await cluster.api.runs.signal(edited, "go", "now");
    for (const id of waiting) await ended(id, "completed");
    await ended(edited, "quarantined");
    const held = Date.now();
    await prometheus.scrapedAfter(held, [hosts.all[1]!]);
    const inQuarantine = await prometheus.query(
      "sum(max by (epoch, reason) (rewind_quarantine_runs)) or vector(0)",
      held / 1000 + 1,
    );
    await cluster.api.quarantine.giveUp(edited, { reason: "edited by hand" });
    await ended(edited, "failed");

    // The workers freeze: a new run waits in the epoch's queue, the backlog the quarantine
    // service serves (it runs whatever the workers do).
    for (const { worker } of replacements) worker.child.kill("SIGSTOP");
    const late = await start(order, 10);
    const backlog = await until(
      "Prometheus to see the backlog",
      async () => {
        // The new run's epoch (newRunEpoch(): 2 on Node 20), among a series per epoch known.
        const sample = (
          await prometheus.query("max by (epoch) (rewind_queue_backlog)", Date.now() / 1000)
        ).find((s) => s.metric.epoch === String(newRunEpoch()));
        return sample?.value?.[1] === "1" ? sample : undefined;
      },
      15_000,
    );
    const seenAt = Date.now() / 1000;
    await pause(1_500); // a few scrapes of it, as a dashboard's step would see
    const thawAt = Date.now() / 1000;
    for (const { worker } of replacements) worker.child.kill("SIGCONT");
    await ended(late, "completed");

    // Every run's end reached the receiver (a 500 first, then a 200).
    const ends = 11;
    await until(
      "every run's end delivered by webhook",
      async () => receiver.delivered("/hook").length >= ends,
      30_000,
    );
    await pause(5_000); // as before the kill: longer series, a smaller share extrapolated
    const done = Date.now();
    await prometheus.scrapedAfter(done, [
      new URL(projectorUrl).host,
      ...hosts.all.slice(0, 2),
      ...replacements.map((w) => new URL(w.healthUrl).host),
    ]);
    expect(await prometheus.targetErrors()).toEqual([]);

    const store = await openStore({ databaseUrl: cluster.databaseUrl });
    const runs = [...orders, late, ...waiting, failing, decline, edited, fork];
    const journals = await Promise.all(runs.map((id) => store.readJournal(id)));
    await store.close();
    const did: Did = {
      started: { start: 10, fork: 1 },
      ended: { completed: 9, failed: 1, cancelled: 0 },
      toolCalls: { charge: 9, slow: 6, decline: 1 },
      toolErrors: { charge: 0, slow: 0, decline: 1 },
      timers: 5,
      quarantined: 1,
      givenUp: 1,
      processes: { api: 1, quarantine: 1, worker: 4, projector: 1 },
      journals,
      hotWhileWaiting: Number(hotWhileWaiting[0]?.value?.[1]),
      inQuarantine: Number(inQuarantine[0]?.value?.[1]),
      backlog: { waiting: Number(backlog.value![1]), from: seenAt, to: thawAt },
      workers: hosts.worker,
      webhooks: { delivered: ends, retrying: ends, failed: 0 },
      limitsHit: Object.fromEntries(LIMIT_NAMES.map((l) => [l, l === "runsInFlight" ? 1 : 0])),
    };
    expect(receiver.delivered("/hook")).toHaveLength(ends);
    expect(did.hotWhileWaiting).toBe(3);
    expect(did.inQuarantine).toBe(1);

    // Every query of every dashboard: stat panels at the end over the whole test, time series
    // over the test's span, as Grafana would ask (its $__range and $__rate_interval filled in).
    const end = Math.max(
      ...(await prometheus.query("timestamp(up)", done / 1000 + 1)).map((s) => Number(s.value![1])),
    );
    const range = Math.ceil(end - started) + 5;
    const fill = (expr: string) =>
      expr
        .replaceAll("$__range_s", String(range))
        .replaceAll("$__range", `${range}s`)
        .replaceAll("$__rate_interval", `${4 * SCRAPE_SECONDS}s`);
    const unchecked: string[] = [];
    for (const dashboard of DASHBOARDS)
      for (const panel of dashboard.panels)
        for (const [i, query] of panel.queries.entries()) {
          const key = `${dashboard.file} / ${panel.title}${panel.queries.length > 1 ? ` #${i + 1}` : ""}`;
          const expectation = expectations[key];
          if (expectation === undefined) {
            unchecked.push(key);
            continue;
          }
          const result =
            panel.kind === "stat"
              ? await prometheus.query(fill(query.expr), end)
              : await prometheus.queryRange(fill(query.expr), started, end, SCRAPE_SECONDS);
          expectation(result, did, key);
        }
    expect(unchecked, "dashboard queries the test does not check").toEqual([]);

    // The same cluster's traces, in a real Collector (the span model's own test is
    // services/projector/test/traces.int.test.ts): a trace per run, its run span's status as the
    // run ended, and the quarantine as an error span naming both callsites.
    for (const [i, id] of runs.entries()) {
      const ends = journals[i]!.filter(
        (e) => e.kind === "run.completed" || e.kind === "run.failed",
      );
      const spans = await until(
        `run ${id}'s trace in the Collector`,
        async () => {
          const spans = collector.trace(traceIdOf(id));
          return spans.filter((s) => s.name === "run").length === ends.length ? spans : undefined;
        },
        30_000,
      );
      expect(
        spans.filter((s) => s.name === "run.started"),
        id,
      ).toHaveLength(1);
      if (ends.length > 0)
        expect(isError(spans.find((s) => s.name === "run")!), id).toBe(
          ends[0]!.kind === "run.failed",
        );
    }
    const quarantined = collector
      .trace(traceIdOf(edited))
      .filter((s) => s.name === "run.quarantined");
    expect(quarantined).toHaveLength(1);
    expect(isError(quarantined[0]!)).toBe(true);
    expect(attribute(quarantined[0]!, "rewind.divergence.recorded.callsite")).toMatch(/\.ts:\d+/);
    expect(attribute(quarantined[0]!, "rewind.divergence.replayed.callsite")).toMatch(/\.ts:\d+/);

    // The run's trace id reached Prometheus as an exemplar (OpenMetrics was negotiated).
    const exemplars = await prometheus.exemplars(
      "rewind_executor_tool_call_duration_seconds_bucket",
      started,
      end,
    );
    const traceIds = new Set(exemplars.flatMap((s) => s.exemplars.map((e) => e.labels.trace_id)));
    expect(traceIds.size).toBeGreaterThan(0);
    const known = new Set(runs.map((id) => traceIdOf(id)));
    for (const id of traceIds) expect(known.has(id!)).toBe(true);

    // promtool check metrics on every live process's /metrics, in the classic text format.
    for (const url of [
      cluster.apiUrl,
      `http://${hosts.all[1]}`,
      projectorUrl,
      ...replacements.map((w) => w.healthUrl),
    ]) {
      const text = await (
        await fetch(`${url}/metrics`, {
          headers: { accept: "text/plain", authorization: `Bearer ${cluster.metricsToken}` },
        })
      ).text();
      expect(text).toContain("# TYPE rewind_process_cpu_seconds_total counter");
      expect(promtoolCheck(text), url).toBe("");
    }
  }, 240_000);
});
