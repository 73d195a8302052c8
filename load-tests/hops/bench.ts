/**
 * Where a run's time goes (issue 18), hop by hop, from `POST /v1/runs` to the run's first tool
 * call and to its result reaching the client: the API's insert and ring, the queue's pick-up,
 * the lease, the sandbox context, the script's top level, each step's commit, the change notice
 * and the client's wake-up. On the cluster users get (../cluster/platform.ts: `rewind api` and
 * `rewind worker` processes, scripts in supervised sandbox processes, REWIND_SANDBOX_PROCESSES
 * at its default), with REWIND_HOP_TRACE=1: each process writes a line per hop it sees
 * (@rewind/telemetry's hops.ts), this harness adds the client's, and prints each hop's p50 and
 * p90 over the runs. The workflows are the peers' workload at C = 1: K trivial steps, each
 * started and awaited by the client.
 *
 *   npm run bench:hops -w load-tests -- [--runs 100] [--steps 10] [--workers 2]
 *                                       [--notices on|off] [--profile]
 *
 * --profile runs every process under `node --cpu-prof` and prints where each one's CPU went
 * (the sandbox processes are named by pid).
 */
import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { Platform } from "../cluster/platform.js";
import { startBench } from "../cluster/processes.js";
import { monotonicUs, printProfiles } from "../cluster/profile-summary.js";
import { fmtMs, percentile } from "../cluster/print.js";
import { CALLS, TOOLSET, compile, hashOf } from "../cluster/scripts.js";
import { hopClock, hopSegments, parseHops, type Marks } from "./segments.js";

const { values: flags } = parseArgs({
  options: {
    runs: { type: "string", default: "100" },
    steps: { type: "string", default: "10" },
    workers: { type: "string", default: "2" },
    notices: { type: "string", default: "on" },
    profile: { type: "boolean", default: false },
  },
});
const N = Number(flags.runs);
const K = Number(flags.steps);
if (!(N > 0 && K > 0)) throw new Error("--runs and --steps must be positive numbers");
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
});
const client: Marks = new Map();
const measured: string[] = [];
const load: number[] = [];
try {
  await platform.start();
  const script = await compile(CALLS, "calls.ts");
  await platform.client.runs.start({ script, toolset: TOOLSET, input: { n: 0 } }); // stores it
  let measuredFromUs = 0;
  for (let i = 0; i < WARM_UP + N; i++) {
    if (i === WARM_UP) measuredFromUs = monotonicUs();
    const posted = hopClock();
    const { id } = await platform.client.runs.start({
      script: hashOf(script),
      toolset: TOOLSET,
      input: { n: K },
    });
    const created = hopClock();
    for (;;) {
      const result = await platform.client.runs.result(id, "30s");
      if (result.status === "completed") break;
      if (result.ended) throw new Error(`run ${id} ended ${result.status}: see ${platform.logDir}`);
    }
    const done = hopClock();
    if (i < WARM_UP) continue; // hot sandboxes, compiled paths, pools
    client.set(id, [
      { name: "client.post", at: posted },
      { name: "client.created", at: created },
      { name: "client.result", at: done },
    ]);
    measured.push(id);
    if (i % 10 === 0) load.push(loadavg()[0]!);
  }
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
  `\n${N} workflows × ${K} steps at C = 1, ${flags.workers} workers, the workers' change notices ${flags.notices}; ` +
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
process.exit(0);
