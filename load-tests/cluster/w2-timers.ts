/**
 * W2: `timerRuns` runs, each making `timerCalls` calls with a durable 1 s sleep between each two.
 * Ideally every run takes (calls − 1) seconds; the figures are how long all of them took and how
 * late each timer fired (timer.fired's time minus the due time its timer.set recorded).
 */
import { int } from "../sandbox/stats.js";
import type { Bench } from "./context.js";
import { assertCompleted, runTimes, timerLateness, waitForRuns } from "./observe.js";
import { fmtMs, percentile, spread } from "./print.js";
import { SLEEPY, compile } from "./scripts.js";
import { startRuns } from "./submit.js";

const SLEEP_MS = 1_000;

export async function w2Timers(bench: Bench): Promise<void> {
  const { platform, report, flags } = bench;
  const { timerRuns: runs, timerCalls: calls } = flags;
  const ideal = (calls - 1) * SLEEP_MS;
  console.log(
    `\n[W2] ${int(runs)} runs × ${calls} calls with a 1 s sleep between calls (ideal run: ${ideal / 1000} s)`,
  );
  const timeoutMs = 60_000 + ideal * 3;
  const script = await compile(SLEEPY, "sleepy.ts");
  const sent = await startRuns(
    platform.client,
    script,
    (i) => ({ calls, sleep: "1s", i }),
    runs,
    flags.inFlight,
    "W2 submit",
    timeoutMs,
  );
  const ids = sent.results;
  await waitForRuns(platform.db, ids, "W2", timeoutMs);
  const times = await runTimes(platform.db, ids);
  assertCompleted("W2", times);
  const index = new Map(ids.map((id, i) => [id, i]));
  const durations = times.map((r) => r.endedMs! - sent.sentAt[index.get(r.id)!]!);
  const firstSent = Math.min(...sent.sentAt);
  const total = Math.max(...times.map((r) => r.endedMs!)) - firstSent;
  const late = await timerLateness(platform.db, ids);
  if (late.length !== runs * (calls - 1))
    throw new Error(`W2: ${late.length} timers fired, expected ${runs * (calls - 1)}`);
  console.log(
    `  all ${int(runs)} runs ended ${(total / 1000).toFixed(2)} s after the first submit (ideal ≥ ${ideal / 1000} s)`,
  );
  console.log(`  run duration (submit → completed): ${spread(durations)}`);
  console.log(`  timer lateness (fired − due): ${spread(late)}`);
  report.info(
    "2. W2 completion time (all runs)",
    `${(total / 1000).toFixed(2)} s (ideal ${ideal / 1000} s)`,
  );
  report.info(
    "2. W2 run duration p50 / p99",
    `${fmtMs(percentile(durations, 0.5))} / ${fmtMs(percentile(durations, 0.99))}`,
  );
  report.info(
    "2. W2 timer lateness p50 / p99 / max",
    `${fmtMs(percentile(late, 0.5))} / ${fmtMs(percentile(late, 0.99))} / ${fmtMs(percentile(late, 1))}`,
  );
}
