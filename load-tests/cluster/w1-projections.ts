/**
 * W1 with every projection on (issue 14's figures): `rewind projector` exporting spans over OTLP
 * to a real OpenTelemetry Collector (the traces test's, built by scripts/install-tools.mjs) and
 * delivering a webhook for every run event to a receiver here, while W1 runs again. Prints W1's
 * calls/s with projections on against off (W1 in the same benchmark run; target within 10%) and
 * the projector's lag at that rate, sampled from its /metrics every second (the age of the oldest
 * committed entry a sink has not delivered; target p99 under 2 s), then how long it took to catch
 * up once W1 ended.
 */
import type { Bench } from "./context.js";
import { fmtMs, percentile } from "./print.js";
import { caughtUp, readLag, startProjections } from "./projections.js";
import { w1Throughput } from "./w1-throughput.js";

const TARGET_COST = 0.1;
const TARGET_LAG_P99_S = 2;
// Each sample is a scrape, whose lag gauge the projector reads from the store: at 4 a second the
// sampling alone cost Postgres about 170 µs a W1 call (measured against no sampling), part of
// the figure it meant to watch. Once a second is still 15 times a usual scrape interval.
const SAMPLE_MS = 1_000;

export async function w1Projections(bench: Bench, w1CallsPerSecond: number | undefined) {
  const { platform, report } = bench;
  const projections = await startProjections(platform);
  try {
    const { metricsUrl } = projections;
    // It starts at the beginning of history: first the earlier workloads' entries (not counted).
    const backlog = await caughtUp(metricsUrl);
    console.log(
      `  projector started; it took ${fmtMs(backlog.ms)} to project the earlier workloads' entries`,
    );
    if (!backlog.done) throw new Error("the projector did not catch up with the earlier workloads");
    const samples = new Map<string, number[]>();
    let sampling = true;
    let missed = 0;
    const sampler = (async () => {
      while (sampling) {
        // A scrape that fails (a kept-alive socket the projector closed as it was reused) is a
        // sample missed, as Prometheus would miss it: never a rejection left to end the bench
        // without stopping its children.
        try {
          const { lag } = await readLag(metricsUrl);
          for (const [sink, seconds] of lag)
            samples.set(sink, [...(samples.get(sink) ?? []), seconds]);
        } catch {
          missed++;
        }
        await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
      }
    })();
    const run = await w1Throughput(bench, "W1+projections");
    sampling = false;
    await sampler;

    const after = await caughtUp(metricsUrl);
    console.log(
      `  projector: ${after.done ? `caught up ${fmtMs(after.ms)} after the last run ended` : `NOT caught up ${fmtMs(after.ms)} after W1`}; ` +
        `${projections.received()} webhook deliveries received; CPU per call ${(run.perCall.projector * 1e6).toFixed(0)} µs`,
    );
    if (missed > 0) console.log(`  ${missed} lag samples missed (the scrape failed)`);
    for (const [sink, lags] of samples) {
      const p99 = percentile(lags, 0.99);
      console.log(
        `  lag of the ${sink} sink during W1 (${lags.length} samples): p50 ${fmtMs(percentile(lags, 0.5) * 1000)}, ` +
          `p99 ${fmtMs(p99 * 1000)}, max ${fmtMs(Math.max(...lags) * 1000)}`,
      );
      report.check(
        `14. projector lag of the ${sink} sink at W1's rate, p99`,
        fmtMs(p99 * 1000),
        `< ${TARGET_LAG_P99_S} s`,
        p99 < TARGET_LAG_P99_S,
      );
    }
    if (w1CallsPerSecond !== undefined) {
      const cost = 1 - run.sustained / w1CallsPerSecond;
      report.check(
        "14. W1 calls/s with all projections on ÷ off",
        `${(run.sustained / w1CallsPerSecond).toFixed(2)}×`,
        `≥ ${(1 - TARGET_COST).toFixed(2)}×`,
        cost <= TARGET_COST,
      );
    } else console.log("  (run W1 in the same benchmark to compare: --only W1,W1-projections)");
    report.check(
      "14. projector caught up after W1",
      after.done ? fmtMs(after.ms) : "no",
      "yes",
      after.done,
    );
  } finally {
    await projections.stop();
  }
}
