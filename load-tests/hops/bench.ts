/**
 * Where a run's time goes (issue 18), hop by hop, from `POST /v1/runs` to the run's first tool
 * call and to its result reaching the client: the API's insert and ring, the queue's pick-up,
 * the lease, the sandbox context, the script's top level, each step's commit, the change notice
 * and the client's wake-up. On the cluster users get (../cluster/platform.ts: `rewind api` and
 * `rewind worker` processes, scripts in supervised sandbox processes, REWIND_SANDBOX_PROCESSES
 * at its default), with REWIND_HOP_TRACE=1: each process writes a line per hop it sees
 * (@rewind/telemetry's hops.ts), this harness adds the client's, and prints each hop's p50 and
 * p90 over the runs. The workflows are the peers' workload: K trivial steps, each started and
 * awaited by the client, C at a time in closed loops (C = 1 by default).
 *
 *   npm run bench:hops -w load-tests -- [--runs 100] [--steps 10] [--workers 2]
 *                                       [--concurrency 1] [--notices on|off] [--profile]
 *                                       [--count-queries] [--execute]
 *
 * --execute starts and awaits each workflow in one request (POST /v1/runs?wait, the SDK's
 * `runs.execute`) instead of POST then GET …/result?wait.
 * --profile runs every process under `node --cpu-prof` and prints where each one's CPU went
 * (the sandbox processes are named by pid); --count-queries, the Postgres queries and Redis
 * commands the API and the workers sent per workflow, by statement.
 */
import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { Platform } from "../cluster/platform.js";
import { startBench } from "../cluster/processes.js";
import { monotonicUs, printProfiles } from "../cluster/profile-summary.js";
import { fmtMs, percentile } from "../cluster/print.js";
import { printCounts, snapshotCounts, type Counts } from "../cluster/counts.js";
import { coresUsed, snapshotCpu, type CpuSnapshot, type CpuUse } from "../cluster/proc.js";
import { CALLS, TOOLSET, compile, hashOf } from "../cluster/scripts.js";
import { hopClock, hopSegments, parseHops, type Marks } from "./segments.js";

const { values: flags } = parseArgs({
  options: {
    runs: { type: "string", default: "100" },
    steps: { type: "string", default: "10" },
    workers: { type: "string", default: "2" },
    concurrency: { type: "string", default: "1" },
    notices: { type: "string", default: "on" },
    profile: { type: "boolean", default: false },
    "count-queries": { type: "boolean", default: false },
    execute: { type: "boolean", default: false },
  },
});
const N = Number(flags.runs);
const K = Number(flags.steps);
const C = Number(flags.concurrency);
if (!(N > 0 && K > 0 && C > 0))
  throw new Error("--runs, --steps and --concurrency must be positive numbers");
if (flags.notices !== "on" && flags.notices !== "off")
  throw new Error(`--notices must be on or off, not ${flags.notices}`);
const WARM_UP = 20;

startBench();

const platform = await Platform.forBench("hops", {
  workers: Number(flags.workers),
  env: { REWIND_HOP_TRACE: "1" },
  // The workers' notices only: the API still listens, its backstop poll the 1 s one.
  workerEnv: { REWIND_CHANGE_NOTICES: flags.notices },
  cpuProf: flags.profile,
  countQueries: flags["count-queries"],
});
const client: Marks = new Map();
const measured: string[] = [];
const load: number[] = [];
let cpu: CpuUse[] = [];
let counts: [Map<string, Counts>, Map<string, Counts>] | undefined;
try {
  await platform.start();
  const script = await compile(CALLS, "calls.ts");
  await platform.client.runs.start({ script, toolset: TOOLSET, input: { n: 0 } }); // stores it
  let measuredFromUs = 0;
  let cpuFrom: CpuSnapshot | undefined;
  let next = 0;
  /** One closed loop: starts a workflow, awaits its result, and takes the next number. */
  const loop = async () => {
    for (let i = next++; i < WARM_UP + N; i = next++) {
      if (i === WARM_UP) {
        measuredFromUs = monotonicUs();
        cpuFrom = snapshotCpu(platform.cpuPids());
        if (flags["count-queries"])
          counts = [await snapshotCounts(platform.pids(), platform.countsDir), new Map()];
      }
      const posted = hopClock();
      const run = { script: hashOf(script), toolset: TOOLSET, input: { n: K } };
      // --execute: started and awaited in one request (no 201 before the end); else two.
      const { id, ...first } = flags.execute
        ? await platform.client.runs.execute(run, { wait: "30s" })
        : await platform.client.runs.start(run);
      const created = hopClock();
      for (let result = first; result.status !== "completed";) {
        if ("ended" in result && result.ended)
          throw new Error(`run ${id} ended ${result.status}: see ${platform.logDir}`);
        result = await platform.client.runs.result(id, "30s");
      }
      const done = hopClock();
      if (i < WARM_UP) continue; // hot sandboxes, compiled paths, pools
      client.set(id, [
        { name: "client.post", at: posted },
        ...(flags.execute ? [] : [{ name: "client.created", at: created }]),
        { name: "client.result", at: done },
      ]);
      measured.push(id);
      if (i % 10 === 0) load.push(loadavg()[0]!);
    }
  };
  await Promise.all(Array.from({ length: C }, loop));
  if (counts) counts[1] = await snapshotCounts(platform.pids(), platform.countsDir);
  cpu = coresUsed(cpuFrom!, snapshotCpu(platform.cpuPids()), await platform.backendPids());
  platform.profileWindows.push({
    label: `the ${N} measured workflows`,
    fromUs: measuredFromUs,
    toUs: monotonicUs(),
  });
} finally {
  await platform.close();
}
if (flags.profile) printProfiles(platform.profileDir, platform.names, platform.profileWindows);

const marks = parseHops(
  [platform.logFiles.map((file) => readFileSync(file, "utf8")).join("\n")],
  client,
);
const segments = hopSegments(measured, marks);
console.log(
  `\n${N} workflows × ${K} steps at C = ${C}, ${flags.workers} workers, the workers' change notices ${flags.notices}; ` +
    `load average ${Math.min(...load).toFixed(1)}–${Math.max(...load).toFixed(1)} (${cpus().length} cores, shared)`,
);
console.log(`${"hop".padEnd(52)} ${"p50".padStart(9)} ${"p90".padStart(9)}  runs`);
for (const { label, samples, total } of segments) {
  if (samples.length === 0) {
    console.log(`${label.padEnd(52)} ${"(unseen)".padStart(9)}`);
    continue;
  }
  const line = `${label.padEnd(52)} ${fmtMs(percentile(samples, 0.5)).padStart(9)} ${fmtMs(
    percentile(samples, 0.9),
  ).padStart(9)}  ${samples.length}`;
  console.log(total ? `${"-".repeat(80)}\n${line}` : line);
}
// CPU time is what other load on the machine disturbs least: where each step's went.
const perStep = (seconds: number) => `${Math.round((seconds * 1e6) / (N * K))} µs`;
const total = cpu.filter((c) => !/shared|everyone|harness/.test(c.name));
console.log(
  `\nCPU per step (${N * K} steps): ` +
    [...total, ...cpu.filter((c) => /redis/.test(c.name))]
      .map((c) => `${c.name} ${perStep(c.seconds)}`)
      .join(", ") +
    `; all of the platform's: ${perStep(total.reduce((sum, c) => sum + c.seconds, 0))}`,
);
if (counts) {
  console.log("round trips (--count-queries):");
  printCounts(counts[0], counts[1], N, "workflow", 12);
}
process.exit(0);
