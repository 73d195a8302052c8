/**
 * The cluster load harness (issue 4): `rewind migrate`, `rewind api` and N `rewind worker`
 * processes from the built CLI, on a fresh Postgres database and a Redis key prefix of their
 * own (both removed at the end), then the workloads through the HTTP API:
 *   floors  Postgres INSERT+COMMIT at 1 and 8 clients; BullMQ's own round trip and jobs/s
 *   W1      2,000 runs × 10 trivial tool calls: journaled calls/s, run latency
 *   W1-drain the same runs submitted before the workers start: execution alone
 *   W1-projections W1 again with the projector on (OTLP to a Collector, webhooks): cost, lag
 *   W2      200 runs × 5 calls with 1 s sleeps: completion time, timer lateness
 *   W3      one run of 10,000 calls: cold replay vs hot activation
 *   W4      5,000 idle runs on one worker: RSS, then all signalled: wake-up
 * `npm run bench:cluster -w load-tests -- --help` for the flags. Build first (npx turbo run build).
 * Every workload has a time limit; the harness always stops its children, and exits 1 if a
 * target is missed or a workload failed.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Report } from "../sandbox/stats.js";
import type { Bench } from "./context.js";
import { parseFlags, type Workload } from "./flags.js";
import { bullmqFloor, postgresFloor } from "./floors.js";
import { dumpRunningJournals } from "./observe.js";
import { enablePgStats } from "./pg-stats.js";
import { Platform } from "./platform.js";
import { printProfiles } from "./profile-summary.js";
import { PROJECTIONS_API_ENV } from "./projections.js";
import { fmtMs, rate } from "./print.js";
import { assertBuilt, killAll } from "./processes.js";
import { w1Drain } from "./w1-drain.js";
import { w1Projections } from "./w1-projections.js";
import { w1Throughput } from "./w1-throughput.js";
import { w2Timers } from "./w2-timers.js";
import { w3ColdReplay } from "./w3-cold-replay.js";
import { w4IdleWake } from "./w4-idle-wake.js";

const DEADLINE_MS = 25 * 60_000; // beyond every workload's own limit: a last resort

const flags = parseFlags(process.argv.slice(2));
assertBuilt();
const report = new Report();
const t0 = Date.now();
const logDir = mkdtempSync(path.join(tmpdir(), "rewind-cluster-bench-"));
console.log(
  `Rewind cluster benchmark: node ${process.version}, ${flags.workers} workers, ` +
    `workloads ${[...flags.only].join(", ")}; child logs in ${logDir}`,
);

let platform: Platform | undefined;
let aborted: number | undefined;
/**
 * Stops everything and leaves: on an interrupt or the deadline. The workload under way then
 * fails too; whichever ends first waits for the same cleanup (Platform.close) before exiting.
 */
const abort = (why: string, code: number) => {
  console.error(`\n${why}: stopping the cluster`);
  aborted = code;
  killAll();
  void (platform?.close(false) ?? Promise.resolve()).finally(() => process.exit(code));
};
process.once("SIGINT", () => abort("Interrupted", 130));
process.once("SIGTERM", () => abort("Terminated", 143));
setTimeout(
  () => abort(`The benchmark did not finish in ${DEADLINE_MS / 60_000} min`, 1),
  DEADLINE_MS,
).unref();

const runs = (w: Workload) => flags.only.has(w);
let failure: unknown;
try {
  platform = await Platform.create({
    workers: flags.workers,
    redisUrl: flags.redisUrl,
    logDir,
    cpuProf: flags.cpuProf,
    countQueries: flags.countQueries,
    ...(flags.concurrency !== undefined ? { concurrency: flags.concurrency } : {}),
    // W1-projections subscribes a webhook receiver on loopback, which the API refuses by default.
    ...(runs("W1-projections") ? { env: PROJECTIONS_API_ENV } : {}),
  });
  const bench: Bench = { platform, report, flags, floors: {} };
  if (flags.pgStats) await enablePgStats(platform.db);
  if (runs("floors")) {
    // On a quiet cluster: nothing of Rewind is started yet.
    console.log("\n[floors] Postgres INSERT+COMMIT (synchronous_commit on), BullMQ round trip");
    for (const clients of [1, 8] as const) {
      const floor = await postgresFloor(platform.databaseUrl, clients, 3);
      bench.floors[clients === 1 ? "pg1" : "pg8"] = floor;
      console.log(
        `  Postgres, ${clients} client(s): ${rate(floor.commitsPerSecond, "commits")}, ` +
          `latency p50 ${fmtMs(floor.latency.median)}, p99 ${fmtMs(floor.latency.p99)}`,
      );
      report.info(
        `0. floor: Postgres INSERT+COMMIT, ${clients} client(s)`,
        rate(floor.commitsPerSecond, "commits"),
      );
    }
    const bull = await bullmqFloor(flags.redisUrl, `${platform.prefix}-floor`);
    bench.floors.bull = bull;
    console.log(
      `  BullMQ: add → process one at a time p50 ${fmtMs(bull.roundTrip.median)}, p99 ${fmtMs(bull.roundTrip.p99)}; ` +
        `${rate(bull.jobsPerSecond, "jobs")} with ${bull.inFlight} in flight`,
    );
    report.info("0. floor: BullMQ add → process, p50", fmtMs(bull.roundTrip.median));
    report.info("0. floor: BullMQ jobs/s, 64 in flight", rate(bull.jobsPerSecond, "jobs"));
  }
  if ([...flags.only].some((w) => w !== "floors")) {
    await platform.start();
    console.log(
      `\ncluster up: rewind api on ${platform.url}, ${platform.workers.map((w) => `${w.name} (pid ${w.pid})`).join(", ")}`,
    );
  }
  const w1 = runs("W1") ? await w1Throughput(bench) : undefined;
  if (runs("W1-drain")) await w1Drain(bench);
  if (runs("W1-projections")) await w1Projections(bench, w1?.sustained);
  if (runs("W2")) await w2Timers(bench);
  if (runs("W3")) await w3ColdReplay(bench);
  if (runs("W4")) await w4IdleWake(bench);
} catch (error) {
  failure = error;
  console.error(`\nThe benchmark failed: ${(error as Error).stack ?? String(error)}`);
  if (platform) {
    console.error(`\nLast lines of each process's log:\n${platform.logs()}`);
    const dumped = await dumpRunningJournals(platform.db, logDir).catch(() => []);
    for (const file of dumped) console.error(`the journal of a run still running: ${file}`);
  }
} finally {
  const problems = (await platform?.close()) ?? [];
  for (const problem of problems) console.error(`cleanup: ${problem}`);
  if (flags.cpuProf && platform)
    printProfiles(platform.profileDir, platform.names, platform.profileWindows);
}

report.print();
const failed = report.failed + (failure === undefined ? 0 : 1);
console.log(
  `\n${failed === 0 ? "All targets met" : `${report.failed} target(s) missed${failure === undefined ? "" : ", and the benchmark failed"}`} ` +
    `in ${((Date.now() - t0) / 1000).toFixed(1)} s; child logs${flags.cpuProf ? " and CPU profiles" : ""} in ${logDir}`,
);
process.exit(aborted ?? (failed === 0 ? 0 : 1));
