/**
 * W1-drain: W1's execution without its submission. The runs are submitted while no worker runs
 * (their activations wait in Redis), then the workers start: throughput is the workers' and
 * Postgres's alone, so comparing it with W1 says whether the API's intake or the execution holds
 * W1 back.
 */
import { int } from "../sandbox/stats.js";
import type { Bench } from "./context.js";
import { Measuring, us } from "./execution.js";
import { assertCompleted, runTimes, waitForRuns } from "./observe.js";
import { rate } from "./print.js";
import { hashOf, TOOLSET } from "./scripts.js";
import { sendAll } from "./submit.js";
import { TARGET_CALLS_PER_SECOND, w1Input, warmUp } from "./w1-throughput.js";

export async function w1Drain(bench: Bench): Promise<void> {
  const { platform, report, flags } = bench;
  const { runs, calls } = flags;
  console.log(
    `\n[W1-drain] ${int(runs)} runs × ${calls} calls submitted with no worker running, then ` +
      `${flags.workers} workers started`,
  );
  const timeoutMs = 60_000 + runs * calls * 5;
  const script = await warmUp(bench);
  await platform.scaleWorkers(0);
  const sent = await sendAll(
    runs,
    flags.inFlight,
    async (i) =>
      (
        await platform.client.runs.start({
          script: hashOf(script),
          input: w1Input(calls)(i),
          toolset: TOOLSET,
        })
      ).id,
    "W1-drain submit",
    timeoutMs,
  );
  const ids = sent.results;
  console.log(`  submitted in ${(sent.elapsedMs / 1000).toFixed(2)} s with no worker running`);
  const t0 = Date.now();
  await platform.scaleWorkers(flags.workers);
  const ready = Date.now();
  const measuring = await Measuring.start(platform, flags.countQueries);
  await waitForRuns(platform.db, ids, "W1-drain", timeoutMs);
  const run = await measuring.finish("W1-drain", ids, runs * calls);
  assertCompleted("W1-drain", await runTimes(platform.db, ids));
  const drained = (run.lastMs - ready) / 1000;
  console.log(
    `  workers ready ${((ready - t0) / 1000).toFixed(2)} s after their start; all ${int(runs * calls)} calls ` +
      `journaled ${drained.toFixed(2)} s later: ${rate((runs * calls) / drained, "calls")} overall, ` +
      `${rate(run.sustained, "calls")} sustained (middle 80%)`,
  );
  report.info("1. W1-drain (execution alone) tool calls/s sustained", rate(run.sustained, "calls"));
  report.info(
    "1. W1-drain ÷ the W1 target",
    `${(run.sustained / TARGET_CALLS_PER_SECOND).toFixed(2)}×`,
  );
  report.info(
    "1. W1-drain CPU per call: workers / pg",
    `${us(run.perCall.workers)} / ${us(run.perCall.postgres)}`,
  );
}
