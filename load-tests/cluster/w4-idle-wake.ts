/**
 * W4: `idle` runs waiting on a signal, all hot on `idleWorkers` workers (the others are stopped
 * first), then all signalled. Figures: each worker's resident memory with them all hot (and per
 * run), and the wake-up: signals sent as fast as the API takes them, each run's latency from its
 * signal's POST to its completion's commit, and runs woken per second.
 */
import { int } from "../sandbox/stats.js";
import type { Bench } from "./context.js";
import { assertCompleted, leasesByOwner, runTimes, waitForRuns } from "./observe.js";
import { fmtMs, gib, mib, percentile, rate, spread } from "./print.js";
import { scrapeAll, total } from "./metrics.js";
import { memoryOf } from "./proc.js";
import { IDLE, compile } from "./scripts.js";
import { sendAll, startRuns } from "./submit.js";

const TARGET_RUNS_PER_WORKER = 5_000;
const TARGET_BYTES = 2 * 2 ** 30;

export async function w4IdleWake(bench: Bench): Promise<void> {
  const { platform, report, flags } = bench;
  const n = flags.idle;
  console.log(
    `\n[W4] ${int(n)} runs idle on waitForSignal("go") on ${flags.idleWorkers} worker(s), then all signalled`,
  );
  await platform.scaleWorkers(flags.idleWorkers);
  const workers = [...platform.workers];
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const baseline = new Map(workers.map((w) => [w.pid, memoryOf(w.pid).rssBytes]));

  const timeoutMs = 60_000 + n * 40;
  const script = await compile(IDLE, "idle.ts");
  const started = await startRuns(
    platform.client,
    script,
    (i) => ({ i }),
    n,
    flags.inFlight,
    "W4 submit",
    timeoutMs,
  );
  const ids = started.results;
  const idleMs = await waitForRuns(platform.db, ids, "W4 idle", timeoutMs, ["waiting"]);
  console.log(
    `  ${int(n)} runs submitted in ${(started.elapsedMs / 1000).toFixed(1)} s, all waiting ` +
      `${((started.elapsedMs + idleMs) / 1000).toFixed(1)} s after the first submit`,
  );
  await new Promise((resolve) => setTimeout(resolve, 2_000)); // let allocation settle
  const owners = await leasesByOwner(platform.db, ids);
  const inside = await scrapeAll(platform.workerMetrics());
  let worst = 0;
  let short = false;
  for (const worker of workers) {
    const memory = memoryOf(worker.pid);
    const hot = [...owners]
      .filter(([owner]) => platform.workerOf(owner) === worker)
      .reduce((s, [, c]) => s + c, 0);
    const base = baseline.get(worker.pid)!;
    const perRun = hot > 0 ? (memory.rssBytes - base) / hot : 0;
    const projected = base + perRun * TARGET_RUNS_PER_WORKER;
    worst = Math.max(worst, hot >= TARGET_RUNS_PER_WORKER ? memory.rssBytes : projected);
    console.log(
      `  ${worker.name}: ${int(hot)} hot runs, RSS ${mib(memory.rssBytes)} (peak ${mib(memory.peakBytes)}, ` +
        `${mib(base)} before), ${(perRun / 1024).toFixed(0)} KiB a run` +
        (hot < TARGET_RUNS_PER_WORKER
          ? `; at ${int(TARGET_RUNS_PER_WORKER)} runs ≈ ${gib(projected)}`
          : ""),
    );
    const samples = inside.get(worker.name);
    const evictions = samples ? total(samples, "rewind_executor_evictions_total") : 0;
    if (samples)
      console.log(
        `    its /metrics: rewind_executor_hot_runs ${int(total(samples, "rewind_executor_hot_runs"))}, ` +
          `hot_heap_bytes ${mib(total(samples, "rewind_executor_hot_heap_bytes"))}, ` +
          `evictions_total ${int(evictions)}`,
      );
    // Runs the hot cache evicted are not hot: the target is 5,000 *hot* runs within the bound.
    if (n / workers.length >= TARGET_RUNS_PER_WORKER && hot < TARGET_RUNS_PER_WORKER) {
      short = true;
      console.log(
        `    only ${int(hot)} of its runs are hot (${int(evictions)} evictions): the hot cache ` +
          `(REWIND_MAX_HOT_MB) holds fewer than ${int(TARGET_RUNS_PER_WORKER)}`,
      );
    }
    report.info(
      `4. W4 ${worker.name}: RSS with ${int(hot)} idle hot runs`,
      `${mib(memory.rssBytes)}`,
    );
    report.info(`4. W4 ${worker.name}: RSS per idle hot run`, `${(perRun / 1024).toFixed(0)} KiB`);
  }
  report.check(
    `4. W4 worker RSS with ${int(TARGET_RUNS_PER_WORKER)} idle hot runs`,
    `${gib(worst)}${short ? " (fewer hot)" : ""}`,
    `≤ ${gib(TARGET_BYTES)}`,
    worst <= TARGET_BYTES && !short,
  );

  const signalled = await sendAll(
    n,
    flags.inFlight,
    (i) => platform.client.runs.signal(ids[i]!, "go", i),
    "W4 signal",
    timeoutMs,
  );
  await waitForRuns(platform.db, ids, "W4 wake-up", timeoutMs);
  const times = await runTimes(platform.db, ids);
  assertCompleted("W4", times);
  const index = new Map(ids.map((id, i) => [id, i]));
  const latency = times.map((r) => r.endedMs! - signalled.sentAt[index.get(r.id)!]!);
  const wall = (Math.max(...times.map((r) => r.endedMs!)) - Math.min(...signalled.sentAt)) / 1000;
  console.log(
    `  signals sent in ${(signalled.elapsedMs / 1000).toFixed(2)} s (POST answered in ${spread(signalled.answerMs)})`,
  );
  console.log(`  all ${int(n)} woken and ended in ${wall.toFixed(2)} s: ${rate(n / wall, "runs")}`);
  console.log(`  wake-up latency (signal POST → completed): ${spread(latency)}`);
  report.info("4. W4 wake-up throughput", rate(n / wall, "runs"));
  report.info(
    "4. W4 wake-up latency p50 / p99",
    `${fmtMs(percentile(latency, 0.5))} / ${fmtMs(percentile(latency, 0.99))}`,
  );
  await platform.scaleWorkers(flags.workers);
}
