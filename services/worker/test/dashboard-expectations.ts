/**
 * What each query of the Grafana dashboards (deploy/grafana) must return after the Prometheus
 * test's workload (prometheus.int.test.ts): counts exactly (rounded: increase() extrapolates a
 * fraction of a scrape interval), other panels by the series they show and bounds on their values.
 * Keyed by "dashboard / panel" (and "#n" for a panel's n-th query); a query with no entry here
 * fails the test.
 */
import { expect } from "vitest";
import type { JournalEntry } from "@rewind/core";
import { newRunEpoch } from "@rewind/sandbox";
import type { Sample } from "./prometheus.js";

/** The epoch the workload's runs start in: the newest this runtime serves (2 on Node 20). */
const EPOCH = String(newRunEpoch());

export interface Did {
  started: Record<string, number>;
  ended: Record<string, number>;
  toolCalls: Record<string, number>;
  toolErrors: Record<string, number>;
  timers: number;
  quarantined: number;
  givenUp: number;
  processes: Record<string, number>;
  journals: JournalEntry[][];
  /** The hot-cache dashboard's "Hot runs" query while three runs waited. */
  hotWhileWaiting: number;
  /** The quarantine dashboard's "In quarantine now" query while the edited run was held. */
  inQuarantine: number;
  /**
   * The activations waiting while every worker was frozen, and from when Prometheus saw them to
   * the thaw (unix seconds). At other moments others may wait too: two signals sent to workers
   * that just started, say.
   */
  backlog: { waiting: number; from: number; to: number };
  /** Every worker's host:port, the killed ones included. */
  workers: string[];
  /** Namespace limits hit, by limit (every limit a series, at 0 if never hit). */
  limitsHit: Record<string, number>;
  /** Webhook delivery attempts by outcome (the receiver answered each event's first with 500). */
  webhooks: Record<string, number>;
}

type Expectation = (result: Sample[], did: Did, key: string) => void;

/** An instant result by one label's value, rounded to a count. */
function counts(result: Sample[], label?: string): Record<string, number> {
  return Object.fromEntries(
    result.map((s) => [
      label === undefined ? "" : (s.metric[label] ?? ""),
      Math.round(Number(s.value![1])),
    ]),
  );
}

/** A range result: each series's values, NaN (no data in a window) left out. */
function values(sample: Sample): number[] {
  return (sample.values ?? []).map(([, v]) => Number(v)).filter((v) => !Number.isNaN(v));
}
const max = (sample: Sample) => Math.max(...values(sample));

/** The label values whose series rose above 0 at some point. */
function active(result: Sample[], label: string): string[] {
  return result
    .filter((s) => max(s) > 0)
    .map((s) => s.metric[label] ?? "")
    .sort();
}

/** Journal entries the workers committed: not run.started (the API's) nor the quarantine service's. */
function workerEntries(did: Did): Record<string, number> {
  const byKind: Record<string, number> = {};
  for (const journal of did.journals)
    for (const entry of journal) {
      if (entry.kind === "run.started" || entry.kind === "run.released") continue;
      if (entry.kind === "run.failed" && entry.error.code === "GIVEN_UP") continue;
      byKind[entry.kind] = (byKind[entry.kind] ?? 0) + 1;
    }
  return byKind;
}
const nonZero = (record: Record<string, number>) =>
  Object.fromEntries(Object.entries(record).filter(([, n]) => n !== 0));
const single = (result: Sample[]) => Math.round(Number(result[0]?.value?.[1] ?? NaN));
const keys = (record: Record<string, number>) => Object.keys(nonZero(record)).sort();

function bounded(low: number, high: number, label?: string, wanted?: string[]): Expectation {
  return (result, _did, key) => {
    if (wanted !== undefined && label !== undefined)
      expect(
        result
          .filter((s) => values(s).length > 0)
          .map((s) => s.metric[label])
          .sort(),
        key,
      ).toEqual(expect.arrayContaining(wanted));
    expect(result.length, key).toBeGreaterThan(0);
    for (const sample of result)
      for (const value of values(sample)) {
        expect(value, key).toBeGreaterThanOrEqual(low);
        expect(value, key).toBeLessThanOrEqual(high);
      }
  };
}

export const expectations: Record<string, Expectation> = {
  "webhooks / Delivery attempts": (r, did, key) =>
    expect(counts(r, "outcome"), key).toEqual(did.webhooks),
  "webhooks / Delivery attempts per second": (r, did, key) =>
    expect(active(r, "outcome"), key).toEqual(keys(did.webhooks)),
  "webhooks / Delivery latency (p99)": bounded(0, 10, "outcome", ["delivered", "retrying"]),
  "webhooks / Pending deliveries": (r, _did, key) => expect(single(r), key).toBe(0),
  "webhooks / Endpoints disabled": (r, _did, key) => expect(single(r), key).toBe(0),
  "webhooks / Webhook sink lag": bounded(0, 60),
  "throughput / Runs started": (r, did, key) => expect(counts(r, "how"), key).toEqual(did.started),
  "throughput / Runs ended": (r, did, key) => expect(counts(r, "status"), key).toEqual(did.ended),
  "throughput / Tool calls": (r, did, key) => expect(counts(r, "tool"), key).toEqual(did.toolCalls),
  "throughput / Runs started and ended per second #1": (r, did, key) =>
    expect(active(r, "how"), key).toEqual(keys(did.started)),
  "throughput / Runs started and ended per second #2": (r, did, key) =>
    expect(active(r, "status"), key).toEqual(keys(did.ended)),
  "throughput / Tool calls per second": (r, did, key) =>
    expect(active(r, "tool"), key).toEqual(keys(did.toolCalls)),
  "throughput / Journal entries per second": (r, did, key) =>
    expect(active(r, "kind"), key).toEqual(keys(workerEntries(did))),
  "throughput / Journal entries": (r, did, key) => {
    // increase() over a worker's series that ends at its SIGKILL (or a count made after its last
    // scrape) is extrapolated or lost by a fraction, and a busy kind can round one or two off.
    const seen = nonZero(counts(r, "kind"));
    const stored = workerEntries(did);
    expect(Object.keys(seen).sort(), key).toEqual(Object.keys(stored).sort());
    for (const [kind, n] of Object.entries(stored))
      expect(
        Math.abs((seen[kind] ?? 0) - n),
        `${key} (${kind}: ${seen[kind]} for ${n})`,
      ).toBeLessThanOrEqual(2);
  },
  "throughput / Activations per second": (r, _did, key) =>
    expect(active(r, "kind"), key).toEqual(["cold", "hot"]),

  "latency / Tool call duration (p99)": (r, _did, key) => {
    const byTool = Object.fromEntries(r.map((s) => [s.metric.tool, values(s)]));
    expect(Math.max(...byTool.slow!), key).toBeGreaterThan(0.1); // slow takes 200 ms
    expect(Math.max(...byTool.slow!), key).toBeLessThan(0.5);
    expect(Math.max(...byTool.charge!), key).toBeLessThan(0.1);
    expect(byTool.decline!.length, key).toBeGreaterThan(0);
  },
  "latency / Tool calls timed": (r, did, key) => {
    const timed = Object.fromEntries(
      r.map((s) => [`${s.metric.tool} ${s.metric.outcome}`, Math.round(Number(s.value![1]))]),
    );
    const wanted: Record<string, number> = {};
    for (const [tool, calls] of Object.entries(did.toolCalls)) {
      wanted[`${tool} ok`] = calls - (did.toolErrors[tool] ?? 0);
      wanted[`${tool} error`] = did.toolErrors[tool] ?? 0;
    }
    expect(timed, key).toEqual(wanted);
  },
  "latency / Activation duration (p99)": bounded(0, 5, "kind", ["cold", "hot"]),
  "latency / Schedule to start (p99)": bounded(0, 5, "delivery", ["shared"]),
  "latency / Timer lateness (p99)": bounded(0, 1),
  "latency / Timers fired": (r, did, key) => expect(single(r), key).toBe(did.timers),
  "latency / Commit duration (p99)": bounded(0, 1),
  "latency / Cold replay duration (p99)": bounded(0, 5),
  "latency / API request duration (p99)": bounded(0, 5, "route", ["/v1/runs", "/v1/runs/:id"]),

  "backlog / Backlog by epoch": (r, did, key) => {
    // One series per epoch the quarantine service knows; the runs were all of EPOCH.
    const byEpoch = new Map(r.map((s) => [s.metric.epoch, s] as const));
    expect(byEpoch.has(EPOCH), key).toBe(true);
    const first = byEpoch.get(EPOCH)!;
    const { waiting, from, to } = did.backlog;
    const frozen = (first.values ?? []).filter(([t]) => t >= from && t <= to);
    expect(frozen.length, `${key}: points while frozen`).toBeGreaterThan(0);
    expect(Math.max(...frozen.map(([, v]) => Number(v))), key).toBe(waiting);
    expect(max(first), key).toBeGreaterThanOrEqual(waiting);
    expect(values(first).at(-1), key).toBe(0); // taken once the workers thawed
    for (const [epoch, series] of byEpoch)
      if (epoch !== EPOCH) expect(max(series), `${key} (epoch ${epoch})`).toBe(0);
  },
  "backlog / Open runs by epoch": (r, _did, key) => {
    const most = Object.fromEntries(r.map((s) => [`${s.metric.epoch} ${s.metric.status}`, max(s)]));
    expect(most[`${EPOCH} waiting`], key).toBeGreaterThanOrEqual(3);
    expect(most[`${EPOCH} quarantined`], key).toBe(1);
    expect(most[`${EPOCH} queued`], key).toBeGreaterThanOrEqual(1);
  },
  "backlog / Activations taken per second": (r, _did, key) =>
    expect(active(r, "delivery"), key).toEqual(expect.arrayContaining(["shared"])),

  "hot-cache / Hot runs": (r, did, key) => {
    expect(did.hotWhileWaiting, key).toBe(3);
    expect(single(r), key).toBe(0); // every run ended
  },
  "hot-cache / Hot runs per worker": (r, did, key) => {
    expect(r.map((s) => s.metric.instance).sort(), key).toEqual([...did.workers].sort());
    expect(
      r.reduce((sum, s) => sum + max(s), 0),
      key,
    ).toBeGreaterThanOrEqual(3);
  },
  "hot-cache / Sandbox heap per worker": (r, did, key) => {
    expect(r.map((s) => s.metric.instance).sort(), key).toEqual([...did.workers].sort());
    expect(Math.max(...r.map(max)), key).toBeGreaterThan(0);
  },
  "hot-cache / Hot share of activations": (r, _did, key) => {
    bounded(0, 1)(r, _did, key);
    expect(max(r[0]!), key).toBeGreaterThan(0);
  },
  "hot-cache / Evictions per second": (r, _did, key) => expect(r, key).toEqual([]), // none

  "quarantine / In quarantine now": (r, did, key) => {
    expect(did.inQuarantine, key).toBe(did.quarantined);
    expect(single(r), key).toBe(0); // given up
  },
  "quarantine / In quarantine by reason": (r, did, key) => {
    expect(
      r.map((s) => `${s.metric.epoch} ${s.metric.reason}`),
      key,
    ).toEqual([`${EPOCH} divergence`]);
    expect(max(r[0]!), key).toBe(did.quarantined);
  },
  "quarantine / Quarantined": (r, did, key) =>
    expect(counts(r, "reason"), key).toEqual({
      divergence: did.quarantined,
      "invalid-journal": 0,
      "not-replayable": 0,
    }),
  "quarantine / Released": (r, _did, key) => {
    // A series from the start for every epoch the service knows: none released.
    const released = counts(r, "epoch");
    expect(released[EPOCH], key).toBe(0);
    expect(Object.values(released), key).toEqual(Object.values(released).map(() => 0));
  },
  "quarantine / Given up": (r, did, key) => expect(single(r), key).toBe(did.givenUp),
  "quarantine / Divergences per second": (r, _did, key) =>
    expect(max(r[0]!), key).toBeGreaterThan(0),

  "errors / Runs failed": (r, did, key) => expect(single(r), key).toBe(did.ended.failed),
  "errors / Tool calls failed": (r, did, key) =>
    expect(counts(r, "tool"), key).toEqual(did.toolErrors),
  "errors / API errors per second": (r, _did, key) =>
    expect(
      r.filter((s) => max(s) > 0).map((s) => `${s.metric.route} ${s.metric.status}`),
      key,
    ).toContain("/v1/runs/:id 404"),
  "errors / Limits hit": (r, did, key) => expect(counts(r, "limit"), key).toEqual(did.limitsHit),
  "errors / Lease losses": (r, _did, key) => expect(single(r), key).toBe(0),
  "errors / Processes started": (r, did, key) =>
    expect(counts(r, "job"), key).toEqual(did.processes),
  "errors / Event loop lag (p99)": (r, did, key) =>
    expect(
      r.map((s) => s.metric.instance),
      key,
    ).toEqual(expect.arrayContaining(did.workers)),
};
