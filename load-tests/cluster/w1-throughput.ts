/**
 * W1: `runs` runs × `calls` calls of a trivial tool, submitted through the API as fast as it
 * takes them. Throughput is journaled tool calls per second (call.result entries: each is
 * committed before the run's next call is made, synchronous_commit on), "sustained" over the
 * middle 80% of them; latency is a run's submit → its completion's commit.
 */
import { int } from "../sandbox/stats.js";
import type { Bench } from "./context.js";
import { Measuring, us, type Execution } from "./execution.js";
import { assertCompleted, runTimes, waitForRuns } from "./observe.js";
import { fmtMs, percentile, rate, spread } from "./print.js";
import { CALLS, TOOLSET, compile, hashOf, type Script } from "./scripts.js";
import { sendAll, startRuns } from "./submit.js";

export const TARGET_CALLS_PER_SECOND = 3_000;
const WARMUP_RUNS = 40;

export const w1Input = (calls: number) => (i: number) => ({ n: calls, i });

/** The W1 script, stored through a few warm-up runs (not counted) that also warm the workers. */
export async function warmUp(bench: Bench): Promise<Script> {
  const { platform, flags } = bench;
  const script = await compile(CALLS, "calls.ts");
  const warm = await startRuns(
    platform.client,
    script,
    w1Input(flags.calls),
    WARMUP_RUNS,
    16,
    "W1 warm-up",
    30_000,
  );
  await waitForRuns(platform.db, warm.results, "W1 warm-up", 60_000);
  return script;
}

/**
 * W1 as `label` (W1, or W1+projections with the projector running): prints and reports its
 * figures, and returns how it executed.
 */
export async function w1Throughput(bench: Bench, label = "W1"): Promise<Execution> {
  const { platform, report, flags } = bench;
  const { runs, calls } = flags;
  console.log(
    `\n[${label}] ${int(runs)} runs × ${calls} calls of a trivial tool, ${flags.workers} workers, ` +
      `${flags.inFlight} submissions in flight`,
  );
  const timeoutMs = 60_000 + runs * calls * 5; // 5 ms a call: 160 s for the default size
  const script = await warmUp(bench);
  const input = w1Input(calls);
  // Each W1 phase from a maintained database, as autovacuum keeps one (this machine's Postgres
  // runs with it off): W1-projections, run after W1 in the same database, otherwise paid for
  // W1's dead row versions and never-analyzed tables, and the two phases did not compare.
  await platform.db.query("VACUUM (ANALYZE)");

  const measuring = await Measuring.start(platform, flags.countQueries, flags.pgStats);
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
    `${label} submit`,
    timeoutMs,
  );
  const ids = sent.results;
  console.log(
    `  submitted in ${(sent.elapsedMs / 1000).toFixed(2)} s (${rate(runs / (sent.elapsedMs / 1000), "runs")}); ` +
      `POST /v1/runs answered in ${spread(sent.answerMs)}`,
  );
  await waitForRuns(platform.db, ids, label, timeoutMs - sent.elapsedMs);
  const run = await measuring.finish(label, ids, runs * calls);

  const times = await runTimes(platform.db, ids);
  assertCompleted(label, times);
  const index = new Map(ids.map((id, i) => [id, i]));
  const latency = times.map((r) => r.endedMs! - sent.sentAt[index.get(r.id)!]!);
  const firstSent = Math.min(...sent.sentAt);
  const lastEnded = Math.max(...times.map((r) => r.endedMs!));
  const overallSeconds = (lastEnded - firstSent) / 1000;
  const overall = (runs * calls) / overallSeconds;
  const commitsPerSecond = run.commits / overallSeconds;
  console.log(
    `  all ended ${overallSeconds.toFixed(2)} s after the first submit ` +
      `(${((lastEnded - firstSent - sent.elapsedMs) / 1000).toFixed(2)} s after the last): ` +
      `${rate(overall, "calls")} overall, ${rate(run.sustained, "calls")} sustained (middle 80%), ` +
      `${rate(runs / overallSeconds, "runs")}, ${rate(commitsPerSecond, "worker commits")}`,
  );
  console.log(`  run latency (submit → completed): ${spread(latency)}`);

  report.check(
    `1. ${label} tool calls/s sustained (${flags.workers} workers)`,
    rate(run.sustained, "calls"),
    `≥ ${int(TARGET_CALLS_PER_SECOND)}/s`,
    run.sustained >= TARGET_CALLS_PER_SECOND,
  );
  report.info(`1. ${label} tool calls/s overall (first submit → last end)`, rate(overall, "calls"));
  report.info(`1. ${label} runs accepted by the API`, rate(runs / (sent.elapsedMs / 1000), "runs"));
  report.info(
    `1. ${label} run latency p50 / p99`,
    `${fmtMs(percentile(latency, 0.5))} / ${fmtMs(percentile(latency, 0.99))}`,
  );
  report.info(`1. ${label} entries per worker commit`, (run.entries / run.commits).toFixed(1));
  report.info(
    `1. ${label} CPU per call: api / workers / pg = total`,
    `${us(run.perCall.api)} / ${us(run.perCall.workers)} / ${us(run.perCall.postgres)} = ${us(run.perCall.total)}` +
      (run.perCall.projector > 0 ? ` (projector ${us(run.perCall.projector)} included)` : ""),
  );
  report.info(`1. ${label} ceiling: 2 cores ÷ CPU per call`, rate(run.ceiling, "calls"));
  const { pg1, pg8, bull } = bench.floors;
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
  if (pg1 && pg8) {
    report.info(
      `1. ${label} calls/s ÷ Postgres commits/s @1 client`,
      ratio(run.sustained, pg1.commitsPerSecond),
    );
    report.info(
      `1. ${label} calls/s ÷ Postgres commits/s @8 clients`,
      ratio(run.sustained, pg8.commitsPerSecond),
    );
    report.info(
      `1. ${label} worker commits/s ÷ Postgres @8 clients`,
      ratio(commitsPerSecond, pg8.commitsPerSecond),
    );
  }
  if (bull)
    report.info(
      `1. ${label} runs/s ÷ BullMQ jobs/s (bare, 64 in flight)`,
      ratio(runs / overallSeconds, bull.jobsPerSecond),
    );
  return run;
}
