/**
 * W3: one run makes `longCalls` calls and then waits for signals; each signal "poke" is one
 * activation (one more call). Timed from the API's POST of the signal to the signal's entry in
 * the journal (the run's owner delivered it and committed):
 *   - hot: the run's sandbox is alive on the worker that holds its lease;
 *   - cold: that worker is first stopped with SIGTERM (it hands its hot runs back: leases
 *     released), so another worker takes the activation, reads the journal and replays it all.
 * After each cold poke a fresh worker is started in the stopped one's place.
 */
import pg from "pg";
import { int } from "../sandbox/stats.js";
import type { Bench } from "./context.js";
import { histogramMean, scrapeAll } from "./metrics.js";
import { lastSeq, leaseOwner, waitForRuns, waitForSeq } from "./observe.js";
import { fmtMs, percentile, rate } from "./print.js";
import { LONG, compile } from "./scripts.js";
import { startRuns } from "./submit.js";

const TARGET_RATIO = 10;
const POKE_TIMEOUT_MS = 60_000;

/** Signals "poke" and times it until the signal is journaled; waits for the poke's call too. */
async function poke(
  bench: Bench,
  watch: pg.Client,
  runId: string,
  payload: number,
): Promise<number> {
  const seq = await lastSeq(watch, runId);
  const t0 = performance.now();
  await bench.platform.client.runs.signal(runId, "poke", payload);
  const ms = await waitForSeq(watch, runId, seq + 1, t0, POKE_TIMEOUT_MS);
  // signal + call commit together, then call.result; then the run waits again.
  await waitForSeq(watch, runId, seq + 3, performance.now(), POKE_TIMEOUT_MS);
  await new Promise((resolve) => setTimeout(resolve, 50));
  return ms;
}

export async function w3ColdReplay(bench: Bench): Promise<void> {
  const { platform, report, flags } = bench;
  const n = flags.longCalls;
  console.log(
    `\n[W3] one run of ${int(n)} calls, then ${flags.hotPokes} hot and ${flags.coldPokes} cold activations (a signal each)`,
  );
  const watch = new pg.Client({ connectionString: platform.databaseUrl });
  await watch.connect();
  try {
    const script = await compile(LONG, "long.ts");
    const { results, sentAt } = await startRuns(
      platform.client,
      script,
      () => ({ n }),
      1,
      1,
      "W3",
      30_000,
    );
    const runId = results[0]!;
    await waitForRuns(platform.db, [runId], `W3 ${int(n)} calls`, 60_000 + n * 20, ["waiting"]);
    const built = (Date.now() - sentAt[0]!) / 1000;
    const entries = await lastSeq(watch, runId);
    console.log(
      `  ${int(n)} sequential calls in one run took ${built.toFixed(1)} s (${rate(n / built, "calls")}); ` +
        `journal: ${int(entries)} entries`,
    );

    const hot: number[] = [];
    for (let i = 0; i < flags.hotPokes; i++) hot.push(await poke(bench, watch, runId, i));
    console.log(`  hot activations: ${hot.map(fmtMs).join(", ")}`);

    const cold: number[] = [];
    /** The replay alone, as the worker that loaded the run measured it (its /metrics). */
    const replayMs: number[] = [];
    if (flags.coldPokes > 0 && flags.workers < 2)
      console.log(
        "  cold activations skipped: they need --workers ≥ 2 (one stops, another replays)",
      );
    for (let i = 0; i < flags.coldPokes && flags.workers >= 2; i++) {
      const owner = leaseOwner(platform.db, runId);
      const holder = platform.workerOf(await owner);
      if (holder === undefined)
        throw new Error(`W3: no running worker holds run ${runId}'s lease (owner ${await owner})`);
      const stopped = await platform.stopWorker(holder);
      const leftWith = await leaseOwner(platform.db, runId);
      console.log(
        `  stopped ${holder.name} (SIGTERM, ${stopped.hung ? "hung after its shutdown: ended by the leash" : stopped.graceful ? "exited" : "killed after the grace period"} ` +
          `in ${fmtMs(stopped.ms)}); lease afterwards: ${leftWith ?? "released"}`,
      );
      const before = await scrapeAll(platform.workerMetrics());
      cold.push(await poke(bench, watch, runId, 1_000 + i));
      const after = await scrapeAll(platform.workerMetrics());
      let replay = { count: 0, meanMs: 0 };
      for (const [worker, samples] of after) {
        const one = histogramMean(
          before.get(worker) ?? new Map(),
          samples,
          "rewind_executor_replay_duration_seconds",
        );
        if (one.count > 0) replay = one;
      }
      if (replay.count > 0) replayMs.push(replay.meanMs);
      await platform.startWorker();
      await new Promise((resolve) => setTimeout(resolve, 500)); // its start-up reconciliation
    }
    if (cold.length > 0)
      console.log(
        `  cold activations (replaying ${int(entries)}+ entries): ${cold.map(fmtMs).join(", ")}; ` +
          `the replay inside the worker: ${replayMs.length > 0 ? replayMs.map(fmtMs).join(", ") : "(not in its metrics)"}`,
      );

    await platform.client.runs.signal(runId, "poke", "stop");
    await waitForRuns(platform.db, [runId], "W3 stop", 30_000);

    const hot50 = percentile(hot, 0.5);
    report.info(
      "3. W3 hot activation p50 / min / max",
      `${fmtMs(hot50)} / ${fmtMs(Math.min(...hot))} / ${fmtMs(Math.max(...hot))}`,
    );
    if (cold.length > 0) {
      const cold50 = percentile(cold, 0.5);
      report.info("3. W3 cold activation (replay) p50", fmtMs(cold50));
      if (replayMs.length > 0)
        report.info(
          "3. W3 replay inside the worker (its metrics), p50",
          fmtMs(percentile(replayMs, 0.5)),
        );
      report.check(
        "3. W3 cold ÷ hot activation (p50s)",
        `${(cold50 / hot50).toFixed(1)}×`,
        `≥ ${TARGET_RATIO}×`,
        cold50 / hot50 >= TARGET_RATIO,
      );
    }
  } finally {
    await watch.end();
  }
}
