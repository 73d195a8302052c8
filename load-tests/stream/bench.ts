/**
 * How soon a commit reaches a client streaming the run's journal (issue 18): Server-Sent Events
 * on `GET /v1/runs/:id/journal`, driven by the workers' change notices. Runs of `--steps` calls
 * that each take `--gap` ms (so each commit is one event on the stream, not a burst), followed
 * with `@rewind/sdk`'s `runs.follow` as they run. Each commit's time is the worker's hop mark
 * (REWIND_HOP_TRACE=1: the commit's last seq and when it committed, @rewind/telemetry's hops.ts),
 * each arrival the client's clock when that seq's entry was parsed, on the same machine's clock.
 * Then the same with the workers' notices cut off (REWIND_CHANGE_NOTICES=off): every commit must
 * still arrive within one backstop poll of the API (1 s with notices, REWIND_POLL_MS).
 *
 *   npm run bench:stream -w load-tests -- [--runs 10] [--steps 50] [--gap 20] [--follow 4]
 *                                         [--workers 2]
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { Platform } from "../cluster/platform.js";
import { startBench } from "../cluster/processes.js";
import { fmtMs, percentile, spread } from "../cluster/print.js";
import { PAUSES, TOOLSET, compile, hashOf } from "../cluster/scripts.js";
import { hopClock, parseHops } from "../hops/segments.js";

const { values: flags } = parseArgs({
  options: {
    runs: { type: "string", default: "10" },
    steps: { type: "string", default: "50" },
    gap: { type: "string", default: "20" },
    follow: { type: "string", default: "4" },
    workers: { type: "string", default: "2" },
  },
});
const RUNS = Number(flags.runs);
const STEPS = Number(flags.steps);
const GAP_MS = Number(flags.gap);
const AT_ONCE = Number(flags.follow);
/** The API's backstop poll when it hears notices (services/api/src/app.ts's default). */
const BACKSTOP_MS = 1_000;
const TARGET_P99_MS = 5;
/** With notices off, a commit waits for the next poll and the read it makes: that read's time. */
const READ_SLACK_MS = 100;

startBench();

/** Commit → arrival of every commit of `RUNS` streamed runs, ms. */
async function measure(notices: "on" | "off"): Promise<{ delays: number[]; load: number[] }> {
  const platform = await Platform.forBench(`stream-${notices}`, {
    workers: Number(flags.workers),
    env: { REWIND_HOP_TRACE: "1" },
    // The workers' notices only: the API still listens, so its backstop poll is the 1 s one.
    workerEnv: { REWIND_CHANGE_NOTICES: notices },
  });
  const arrivals = new Map<string, Map<number, number>>();
  /** When each run's stream was established (its first status event): commits before are backlog. */
  const opened = new Map<string, number>();
  const load: number[] = [];
  try {
    await platform.start();
    const script = await compile(PAUSES, "pauses.ts");
    await platform.client.runs.start({ script, toolset: TOOLSET, input: { n: 0, ms: 0 } });
    let next = 0;
    const lane = async () => {
      while (next++ < RUNS) {
        const { id } = await platform.client.runs.start({
          script: hashOf(script),
          toolset: TOOLSET,
          input: { n: STEPS, ms: GAP_MS },
        });
        const seen = new Map<number, number>();
        arrivals.set(id, seen);
        const onStatus = () => {
          if (!opened.has(id)) opened.set(id, hopClock());
        };
        for await (const entry of platform.client.runs.follow(id, { onStatus }))
          seen.set(entry.seq, hopClock());
        load.push(loadavg()[0]!);
      }
    };
    await Promise.all(Array.from({ length: AT_ONCE }, lane));
  } finally {
    await platform.close();
  }
  const marks = parseHops(
    platform.logFiles.map((file) => readFileSync(file, "utf8")),
    new Map(),
  );
  const delays: number[] = [];
  for (const [id, seen] of arrivals) {
    for (const mark of marks.get(id) ?? []) {
      if (mark.seq === undefined || !mark.name.startsWith("worker.")) continue;
      // Committed before the stream was there: read as backlog when it opened, not streamed.
      if (mark.at < (opened.get(id) ?? Number.POSITIVE_INFINITY)) continue;
      const arrived = seen.get(mark.seq);
      if (arrived === undefined)
        throw new Error(
          `run ${id}: seq ${mark.seq} committed but never streamed (see ${platform.logDir})`,
        );
      delays.push(arrived - mark.at);
    }
  }
  return { delays, load };
}

const range = (load: number[]) =>
  `load average ${Math.min(...load).toFixed(1)}–${Math.max(...load).toFixed(1)}`;
let failed = false;
const on = await measure("on");
const p99 = percentile(on.delays, 0.99);
console.log(
  `\ncommit → streaming client, the workers' notices on (${RUNS} runs × ${STEPS} commits ${GAP_MS} ms apart, ${AT_ONCE} followed at once; ${range(on.load)}):\n  ${spread(on.delays)}; target p99 ≤ ${TARGET_P99_MS} ms: ${p99 <= TARGET_P99_MS ? "met" : "MISSED"}`,
);
if (p99 > TARGET_P99_MS) failed = true;
const off = await measure("off");
const worst = percentile(off.delays, 1);
const bound = BACKSTOP_MS + READ_SLACK_MS;
console.log(
  `commit → streaming client, the workers' notices off (${range(off.load)}):\n  ${spread(off.delays)}; target: every one within one backstop poll (${BACKSTOP_MS} ms, + ${READ_SLACK_MS} ms for its read): ${worst <= bound ? "met" : `MISSED (max ${fmtMs(worst)})`}`,
);
if (worst > bound) failed = true;
process.exit(failed ? 1 : 0);
