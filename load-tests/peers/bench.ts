/**
 * The peers' workload (issue 18): N workflows × K trivial steps, C at a time in closed loops
 * (each loop starts its next workflow when the last one ends), through Rewind's public HTTP API
 * exactly as a client would: POST /v1/runs?wait (start and await in one request; SDK's
 * `runs.execute`), then GET /v1/runs/:id/result?wait if it outlived that wait. The cluster is
 * `rewind api` and W `rewind worker` processes on Postgres (synchronous_commit on) and Redis
 * (see ../cluster/platform.ts). In the same run, DBOS and Restate on the same workload, from the
 * harnesses in ../../shared/peers (installed in a scratch copy: PEERS_DIR, default
 * $TMPDIR/rewind-peers); missing peers fail the benchmark unless --no-peers. With --projections,
 * Rewind runs with every projection on (`rewind projector`: traces to a real Collector, a webhook
 * for every run event), as users run it.
 *
 *   npm run bench:peers -w load-tests -- [--runs 200] [--steps 10] [--concurrency 1,32]
 *                                        [--rounds 3] [--workers 2] [--no-peers] [--projections]
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { Platform } from "../cluster/platform.js";
import {
  PROJECTIONS_API_ENV,
  caughtUp,
  startProjections,
  type Projections,
} from "../cluster/projections.js";
import { assertBuilt, killAll } from "../cluster/processes.js";
import { monotonicUs, printProfiles } from "../cluster/profile-summary.js";
import { CALLS, TOOLSET, compile, hashOf } from "../cluster/scripts.js";

const { values: flags } = parseArgs({
  options: {
    runs: { type: "string", default: "200" },
    steps: { type: "string", default: "10" },
    concurrency: { type: "string", default: "1,32" },
    rounds: { type: "string", default: "3" },
    workers: { type: "string", default: "2" },
    "no-peers": { type: "boolean", default: false },
    projections: { type: "boolean", default: false },
    profile: { type: "boolean", default: false },
  },
});
const N = Number(flags.runs);
const K = Number(flags.steps);
const CONCURRENCY = flags.concurrency.split(",").map(Number);
const ROUNDS = Number(flags.rounds);
const PEERS_DIR = process.env.PEERS_DIR ?? path.join(tmpdir(), "rewind-peers");
const PEERS = ["dbos", "restate"] as const;

interface Row {
  who: string;
  c: number;
  stepsPerSec: number;
  p50: number;
  p99: number;
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

/** The peers must be installed first (their README says how); checked before anything runs. */
function checkPeers(): void {
  const missing = PEERS.filter((p) => !existsSync(path.join(PEERS_DIR, p, "node_modules")));
  if (missing.length === 0) return;
  console.error(
    `The peer harnesses ${missing.join(", ")} are not installed in ${PEERS_DIR}: ` +
      `cp -r ../shared/peers ${PEERS_DIR} && (cd ${PEERS_DIR}/dbos && npm ci) && (cd ${PEERS_DIR}/restate && npm ci), ` +
      `or set PEERS_DIR, or run with --no-peers to measure Rewind alone`,
  );
  process.exit(1);
}

async function rewindRows(): Promise<Row[]> {
  const logDir = mkdtempSync(path.join(tmpdir(), "rewind-peers-bench-"));
  const platform = await Platform.create({
    workers: Number(flags.workers),
    redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    logDir,
    cpuProf: flags.profile,
    countQueries: false,
    ...(flags.projections ? { env: PROJECTIONS_API_ENV } : {}),
  });
  const rows: Row[] = [];
  let projections: Projections | undefined;
  try {
    await platform.start();
    if (flags.projections) projections = await startProjections(platform);
    const client = platform.client;
    const script = await compile(CALLS, "calls.ts");
    await client.runs.start({ script, toolset: TOOLSET, input: { n: 0 } }); // stores the script
    const one = async () => {
      const began = performance.now();
      // Started and awaited in one request, as a client that wants the result does (SDK's execute).
      const { id, ...started } = await client.runs.execute(
        { script: hashOf(script), toolset: TOOLSET, input: { n: K } },
        { wait: "30s" },
      );
      for (let result = started; ; result = await client.runs.result(id, "30s")) {
        if (result.status === "completed") break;
        if (
          result.status !== "queued" &&
          result.status !== "running" &&
          result.status !== "waiting"
        )
          throw new Error(`run ${id} ended ${result.status}: see the logs in ${logDir}`);
      }
      return performance.now() - began;
    };
    const round = async (c: number, n: number) => {
      const times: number[] = [];
      let next = 0;
      const began = performance.now();
      await Promise.all(
        Array.from({ length: c }, async () => {
          while (next++ < n) times.push(await one());
        }),
      );
      const seconds = (performance.now() - began) / 1000;
      times.sort((a, b) => a - b);
      return { stepsPerSec: (n * K) / seconds, p50: pct(times, 50), p99: pct(times, 99) };
    };
    for (const c of CONCURRENCY) {
      await round(c, Math.min(N, 4 * c)); // warm-up: hot sandboxes, compiled paths, pools
      const fromUs = monotonicUs();
      for (let r = 0; r < ROUNDS; r++) {
        const row = { who: "rewind", c, ...(await round(c, N)) };
        console.log(JSON.stringify(row));
        rows.push(row);
      }
      platform.profileWindows.push({ label: `C = ${c}`, fromUs, toUs: monotonicUs() });
    }
    if (projections !== undefined) {
      const after = await caughtUp(projections.metricsUrl);
      console.log(
        `projections: ${projections.received()} webhook deliveries; the projector ${after.done ? `caught up ${Math.round(after.ms)} ms after the last workflow` : "did NOT catch up"}`,
      );
    }
  } finally {
    await projections?.stop();
    await platform.close();
  }
  if (flags.profile) printProfiles(platform.profileDir, platform.names, platform.profileWindows);
  return rows;
}

/** One peer harness, its JSON lines as rows (lines without steps/s are its own notes). */
function peerRows(peer: string): Promise<Row[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["bench.js", String(N), String(K), CONCURRENCY.join(","), String(ROUNDS)],
      { cwd: path.join(PEERS_DIR, peer), stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.once("error", reject);
    child.once("exit", (code) => {
      if (code !== 0) return reject(new Error(`${peer}'s bench exited ${code}`));
      const rows: Row[] = [];
      for (const line of out.split("\n")) {
        if (!line.startsWith("{")) continue;
        const raw = JSON.parse(line) as Record<string, number>;
        // The harnesses' line: { peer, N, K, conc, run, wall, wfps, stepsps, p50, p99, … }.
        const stepsPerSec = raw.stepsps;
        const c = raw.conc;
        if (stepsPerSec === undefined || c === undefined) continue;
        const p50 = raw.p50 ?? NaN;
        const p99 = raw.p99 ?? NaN;
        const row = { who: peer, c, stepsPerSec, p50, p99 };
        console.log(JSON.stringify(row));
        rows.push(row);
      }
      resolve(rows);
    });
  });
}

function summary(rows: Row[]): void {
  const on = flags.projections ? ", Rewind with every projection on" : "";
  console.log(`\n${N} workflows × ${K} steps, medians of ${ROUNDS} rounds${on}`);
  console.log("who        C   steps/s   p50 ms   p99 ms");
  const best = new Map<number, number>();
  for (const who of ["rewind", ...PEERS]) {
    for (const c of CONCURRENCY) {
      const mine = rows.filter((r) => r.who === who && r.c === c);
      if (mine.length === 0) continue;
      const sps = median(mine.map((r) => r.stepsPerSec));
      if (who !== "rewind") best.set(c, Math.max(best.get(c) ?? 0, sps));
      console.log(
        `${who.padEnd(9)} ${String(c).padStart(2)} ${sps.toFixed(0).padStart(9)} ${median(
          mine.map((r) => r.p50),
        )
          .toFixed(1)
          .padStart(8)} ${median(mine.map((r) => r.p99))
          .toFixed(1)
          .padStart(8)}`,
      );
    }
  }
  for (const c of CONCURRENCY) {
    const peer = best.get(c);
    const ours = rows.filter((r) => r.who === "rewind" && r.c === c);
    if (peer === undefined || ours.length === 0) continue;
    const ratio = median(ours.map((r) => r.stepsPerSec)) / peer;
    console.log(`C = ${c}: Rewind ÷ the better peer = ${ratio.toFixed(2)}×`);
  }
}

assertBuilt();
if (!flags["no-peers"]) checkPeers();
process.once("SIGINT", () => {
  killAll();
  process.exit(130);
});
const rows = await rewindRows();
if (!flags["no-peers"]) for (const peer of PEERS) rows.push(...(await peerRows(peer)));
summary(rows);
process.exit(0);
