/**
 * W1: `runs` runs × `calls` calls of a trivial tool, submitted through the API as fast as it
 * takes them. Throughput is journaled tool calls per second (call.result entries: each is
 * committed before the run's next call is made, synchronous_commit on), "sustained" over the
 * middle 80% of them; latency is a run's submit → its completion's commit.
 */
import { int } from "../sandbox/stats.js";
import type { Bench } from "./context.js";
import { printCounts, snapshotCounts } from "./counts.js";
import { assertCompleted, entryTimes, runTimes, waitForRuns, workerCommits } from "./observe.js";
import { fmtMs, percentile, rate, spread } from "./print.js";
import { clusterDelta, delta, scrapeAll, type Samples } from "./metrics.js";
import { BENCH_POSTGRES, coresUsed, formatCores, snapshotCpu } from "./proc.js";
import { CALLS, TOOLSET, compile, hashOf } from "./scripts.js";
import { sendAll, startRuns } from "./submit.js";

const TARGET_CALLS_PER_SECOND = 3_000;
const WARMUP_RUNS = 40;

const us = (seconds: number): string => `${(seconds * 1e6).toFixed(0)} µs`;

/** The workers' group commits between two scrapes: how many, and their mean duration. */
function commitMean(before: Map<string, Samples>, after: Map<string, Samples>) {
  let count = 0;
  let sum = 0;
  for (const [worker, samples] of after) {
    const was = before.get(worker) ?? new Map<string, number>();
    count += delta(was, samples, "rewind_executor_commit_duration_seconds_count");
    sum += delta(was, samples, "rewind_executor_commit_duration_seconds_sum");
  }
  return { count, meanMs: count > 0 ? (sum / count) * 1000 : 0 };
}

export interface W1Figures {
  callsPerSecond: number;
  runsPerSecond: number;
  commitsPerSecond: number;
}

export async function w1Throughput(bench: Bench): Promise<W1Figures> {
  const { platform, report, flags } = bench;
  const { runs, calls } = flags;
  console.log(
    `\n[W1] ${int(runs)} runs × ${calls} calls of a trivial tool, ${flags.workers} workers, ` +
      `${flags.inFlight} submissions in flight`,
  );
  const timeoutMs = 60_000 + runs * calls * 5; // 5 ms a call: 160 s for the default size
  const script = await compile(CALLS, "calls.ts");
  const input = (i: number) => ({ n: calls, i });

  // Warm-up (not counted): the script stored, workers' sandboxes and code paths warm.
  const warm = await startRuns(
    platform.client,
    script,
    input,
    WARMUP_RUNS,
    16,
    "W1 warm-up",
    30_000,
  );
  await waitForRuns(platform.db, warm.results, "W1 warm-up", 60_000);

  const countsBefore = flags.countQueries
    ? await snapshotCounts(platform.pids(), platform.countsDir)
    : undefined;
  const metricsBefore = await scrapeAll(platform.workerMetrics());
  const before = snapshotCpu(platform.pids());
  const sent = await sendAll(
    runs,
    flags.inFlight,
    async (i) =>
      (
        await platform.client.runs.start({
          script: hashOf(script),
          input: input(i),
          toolset: TOOLSET,
        })
      ).id,
    "W1 submit",
    timeoutMs,
  );
  const ids = sent.results;
  console.log(
    `  submitted in ${(sent.elapsedMs / 1000).toFixed(2)} s (${rate(runs / (sent.elapsedMs / 1000), "runs")}); ` +
      `POST /v1/runs answered in ${spread(sent.answerMs)}`,
  );
  await waitForRuns(platform.db, ids, "W1", timeoutMs - sent.elapsedMs);
  const cores = coresUsed(before, snapshotCpu(platform.pids()), await platform.backendPids());
  const metricsAfter = await scrapeAll(platform.workerMetrics());
  if (countsBefore) {
    console.log("  round trips (--count-queries):");
    printCounts(
      countsBefore,
      await snapshotCounts(platform.pids(), platform.countsDir),
      runs,
      "run",
    );
  }

  const times = await runTimes(platform.db, ids);
  assertCompleted("W1", times);
  const index = new Map(ids.map((id, i) => [id, i]));
  const latency = times.map((r) => r.endedMs! - sent.sentAt[index.get(r.id)!]!);
  const firstSent = Math.min(...sent.sentAt);
  const lastEnded = Math.max(...times.map((r) => r.endedMs!));
  const overallSeconds = (lastEnded - firstSent) / 1000;

  const results = await entryTimes(platform.db, ids, "call.result");
  if (results.length !== runs * calls)
    throw new Error(
      `W1: ${results.length} call.result entries journaled, expected ${runs * calls}`,
    );
  // Sustained: the middle 80% of the calls, between the 10th and 90th percentile of their times.
  const lo = percentile(results, 0.1);
  const hi = percentile(results, 0.9);
  const sustained = (0.8 * results.length) / ((hi - lo) / 1000);
  const overall = results.length / overallSeconds;
  const { commits, entries } = await workerCommits(platform.db, ids);
  const commitsPerSecond = commits / overallSeconds;

  console.log(
    `  all ended ${overallSeconds.toFixed(2)} s after the first submit: ${rate(overall, "calls")} overall, ` +
      `${rate(sustained, "calls")} sustained (middle 80%), ${rate(runs / overallSeconds, "runs")}`,
  );
  console.log(`  run latency (submit → completed): ${spread(latency)}`);
  console.log(
    `  worker commits: ${int(commits)} transactions for ${int(entries)} journal entries ` +
      `(${(entries / commits).toFixed(1)} entries, ${((runs * calls) / commits).toFixed(2)} tool calls a commit), ` +
      `${rate(commitsPerSecond, "commits")}`,
  );
  const commitMs = commitMean(metricsBefore, metricsAfter);
  const activations = (kind: string) =>
    clusterDelta(
      metricsBefore,
      metricsAfter,
      "rewind_executor_activations_total",
      `kind="${kind}"`,
    );
  console.log(
    `  inside the workers (/metrics): ${int(commitMs.count)} group commits, mean ${fmtMs(commitMs.meanMs)}; ` +
      `activations: ${int(activations("hot"))} hot, ${int(activations("cold"))} cold`,
  );
  console.log(`  CPU, cores (of 2): ${formatCores(cores)}`);
  // CPU per call is the figure least disturbed by other work on the machine: what the platform's
  // processes spent per journaled call, and the rate two otherwise idle cores would allow.
  const spent = (match: (name: string) => boolean) =>
    cores.filter((r) => match(r.name)).reduce((sum, r) => sum + r.seconds, 0) / (runs * calls);
  const perCall = {
    api: spent((n) => n === "api"),
    workers: spent((n) => n.startsWith("worker")),
    postgres: spent((n) => n === BENCH_POSTGRES),
  };
  const platformPerCall = perCall.api + perCall.workers + perCall.postgres;
  const ceiling = 2 / platformPerCall;
  console.log(
    `  CPU per journaled tool call: api ${us(perCall.api)}, workers ${us(perCall.workers)}, ` +
      `postgres ${us(perCall.postgres)} = ${us(platformPerCall)}: two idle cores would allow at most ` +
      `${rate(ceiling, "calls")}`,
  );

  report.check(
    `1. W1 tool calls/s sustained (${flags.workers} workers)`,
    rate(sustained, "calls"),
    `≥ ${int(TARGET_CALLS_PER_SECOND)}/s`,
    sustained >= TARGET_CALLS_PER_SECOND,
  );
  report.info("1. W1 tool calls/s overall (first submit → last end)", rate(overall, "calls"));
  report.info(
    "1. W1 run latency p50 / p99",
    `${fmtMs(percentile(latency, 0.5))} / ${fmtMs(percentile(latency, 0.99))}`,
  );
  report.info("1. W1 entries per worker commit", (entries / commits).toFixed(1));
  report.info("1. W1 platform CPU per tool call (api+workers+pg)", us(platformPerCall));
  report.info("1. W1 ceiling: 2 cores ÷ CPU per call", rate(ceiling, "calls"));
  const { pg1, pg8, bull } = bench.floors;
  if (pg1 && pg8) {
    report.info(
      "1. W1 calls/s ÷ Postgres commits/s @1 client",
      `${(sustained / pg1.commitsPerSecond).toFixed(2)}×`,
    );
    report.info(
      "1. W1 calls/s ÷ Postgres commits/s @8 clients",
      `${(sustained / pg8.commitsPerSecond).toFixed(2)}×`,
    );
    report.info(
      "1. W1 worker commits/s ÷ Postgres @8 clients",
      `${(commitsPerSecond / pg8.commitsPerSecond).toFixed(2)}×`,
    );
  }
  if (bull)
    report.info(
      "1. W1 runs/s ÷ BullMQ jobs/s (bare, 64 in flight)",
      `${(runs / overallSeconds / bull.jobsPerSecond).toFixed(2)}×`,
    );
  return { callsPerSecond: sustained, runsPerSecond: runs / overallSeconds, commitsPerSecond };
}
