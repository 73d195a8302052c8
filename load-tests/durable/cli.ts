/**
 * Figure 3: `rewind run examples/hello.ts --toolset shop --wait` against a running `rewind dev`,
 * both the real CLI (libs/cli/dist/main.js) as child processes. The dev platform runs in a temp
 * working directory (its .rewind/ and token live there) and is always killed at the end.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { compileScript } from "@rewind/sandbox/compiler";
import { Rewind } from "@rewind/sdk";
import { createTestDatabase } from "@rewind/store/testing";
import { Report, summarize } from "../sandbox/stats.js";
import { percentile } from "./stats.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI = path.join(ROOT, "libs/cli/dist/main.js");
const HELLO = path.join(ROOT, "examples/hello.ts");
// Referenced in place: it imports @rewind/sdk, which resolves from the repository's node_modules.
const TOOLS = path.join(ROOT, "examples/tools.ts");
const RUNS = 10;
const UNCACHED_RUNS = 5;
const ENDINGS = new Set(["run.completed", "run.failed", "run.cancelled", "run.quarantined"]);
const TARGET_MS = 300;

/** Every dev child still alive, killed on any exit of this process. */
const children = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of children) child.kill("SIGKILL");
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface Done {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs a command to its end; wall time from spawn to exit. */
function timed(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Done> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.once("error", reject);
    child.once("close", (code) =>
      resolve({ code, stdout, stderr, ms: Number(process.hrtime.bigint() - t0) / 1e6 }),
    );
  });
}

async function waitHealthy(url: string, dev: ChildProcess, log: () => string): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    if (dev.exitCode !== null) throw new Error(`rewind dev exited ${dev.exitCode}:\n${log()}`);
    try {
      const response = await fetch(`${url}/healthz`);
      if (response.ok) return Date.now() - t0;
    } catch {
      // not listening yet
    }
    if (Date.now() - t0 > 60_000) throw new Error(`rewind dev not healthy after 60 s:\n${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function stop(dev: ChildProcess): Promise<void> {
  if (dev.exitCode !== null || dev.signalCode !== null) return void children.delete(dev);
  const exited = new Promise<void>((resolve) => dev.once("exit", () => resolve()));
  dev.kill("SIGTERM");
  const timer = setTimeout(() => dev.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
  children.delete(dev);
}

/** Starts `rewind dev`, times RUNS sequential `rewind run --wait`, stops it. Times in ms. */
async function devSession(label: string, databaseUrl: string | undefined) {
  const cwd = mkdtempSync(path.join(tmpdir(), "rewind-bench-dev-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // A compile cache of its own, empty: the first run compiles hello.ts, the timed ones reuse it.
  const cache = path.join(cwd, "compile-cache");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    REWIND_URL: url,
    NO_COLOR: "1",
    REWIND_CACHE_DIR: cache,
  };
  delete env.REWIND_TOKEN; // the CLI reads ./.rewind/token, as a user beside `rewind dev` would
  delete env.DATABASE_URL;
  if (databaseUrl !== undefined) env.DATABASE_URL = databaseUrl;
  const dev = spawn(process.execPath, [CLI, "dev", "--port", String(port), "--toolset", TOOLS], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(dev);
  let log = "";
  dev.stdout!.on("data", (d: Buffer) => (log += d.toString()));
  dev.stderr!.on("data", (d: Buffer) => (log += d.toString()));
  try {
    const startMs = await waitHealthy(url, dev, () => log);
    const args = [CLI, "run", HELLO, "--toolset", "shop", "--wait"];
    const first = await timed(args, cwd, env); // the platform's first run (cold caches): not counted
    if (first.code !== 0 || !first.stdout.includes("hello, world"))
      throw new Error(`rewind run failed (${first.code}):\n${first.stdout}${first.stderr}\n${log}`);
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const done = await timed(args, cwd, env);
      if (done.code !== 0 || !done.stdout.includes('"greeting":"hello, world"'))
        throw new Error(`rewind run failed (${done.code}):\n${done.stdout}${done.stderr}`);
      times.push(done.ms);
    }
    // The same with the compile cache off: each run compiles hello.ts (loads esbuild, starts it).
    const uncached: number[] = [];
    for (let i = 0; i < UNCACHED_RUNS; i++)
      uncached.push((await timed(args, cwd, { ...env, REWIND_CACHE_DIR: "" })).ms);
    const s = summarize(times);
    const p90 = percentile(times, 0.9);
    const server = await serverSide(url, cwd);
    const exit = await fetchExit(url);
    console.log(
      `  ${label}: dev healthy after ${startMs} ms; first run ${first.ms.toFixed(0)} ms; ` +
        `${RUNS} runs: ${times.map((t) => t.toFixed(0)).join(", ")} ms`,
    );
    console.log(
      `  ${label}: median ${s.median.toFixed(0)} ms, p90 ${p90.toFixed(0)} ms, ` +
        `mean ${s.mean.toFixed(0)} ms, min ${s.min.toFixed(0)} ms, max ${s.max.toFixed(0)} ms`,
    );
    const compiling = summarize(uncached).median;
    console.log(
      `  ${label}: with the compile cache off (REWIND_CACHE_DIR=""), median of ${UNCACHED_RUNS}: ` +
        `${compiling.toFixed(0)} ms`,
    );
    console.log(
      `  ${label}: the same run submitted in-process (SDK: POST /v1/runs, then journal long-polls ` +
        `until the end; no process start, no compile): median ${server.toFixed(1)} ms`,
    );
    console.log(
      `  ${label}: \`node -e "await fetch(healthz)"\` median ${exit.plain.toFixed(0)} ms; with ` +
        `--liftoff-only ${exit.liftoff.toFixed(0)} ms (exit waits for wasm tier-up of undici's parser)`,
    );
    return { median: s.median, p90, min: s.min, server, exit, compiling, first: first.ms };
  } finally {
    await stop(dev);
    rmSync(cwd, { recursive: true, force: true });
  }
}

/** The server's part: what `rewind run --wait` asks, from this process (median of RUNS, ms). */
async function serverSide(url: string, cwd: string): Promise<number> {
  const token = readFileSync(path.join(cwd, ".rewind", "token"), "utf8").trim();
  const api = new Rewind({ url, token });
  const script = await compileScript({ file: HELLO });
  const times: number[] = [];
  for (let i = 0; i <= RUNS; i++) {
    const t0 = process.hrtime.bigint();
    const { id } = await api.runs.start({
      script: { entry: script.entry, code: script.code, sourceMap: script.sourceMap },
      input: null,
      toolset: "shop",
    });
    for (let after = 0, ended = false; !ended;) {
      const { entries } = await api.runs.journal(id, after, "30s");
      for (const entry of entries) {
        after = entry.seq;
        if (ENDINGS.has(entry.kind)) ended = true;
      }
    }
    if (i > 0) times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return summarize(times).median;
}

/**
 * A node process that makes one fetch() and exits, with and without --liftoff-only: the
 * difference is the exit waiting for V8's background optimisation of undici's WebAssembly HTTP
 * parser (every CLI command that calls the API pays it). Medians of 5, ms.
 */
async function fetchExit(url: string): Promise<{ plain: number; liftoff: number }> {
  const code = `await (await fetch(${JSON.stringify(`${url}/healthz`)})).text();`;
  const plain: number[] = [];
  const liftoff: number[] = [];
  for (let i = 0; i < 5; i++) {
    plain.push((await timed(["--input-type=module", "-e", code], tmpdir(), process.env)).ms);
    liftoff.push(
      (await timed(["--liftoff-only", "--input-type=module", "-e", code], tmpdir(), process.env))
        .ms,
    );
  }
  return { plain: summarize(plain).median, liftoff: summarize(liftoff).median };
}

/**
 * What NODE_EXTRA_CA_CERTS (set in some environments, this one's included) costs each node
 * process at start: node reads and parses that file before any code runs. Medians of 5, ms.
 */
async function extraCaCost(): Promise<{ with: number; without: number } | undefined> {
  if (process.env.NODE_EXTRA_CA_CERTS === undefined) return undefined;
  const bare = { ...process.env };
  delete bare.NODE_EXTRA_CA_CERTS;
  const withIt: number[] = [];
  const without: number[] = [];
  for (let i = 0; i < 5; i++) {
    withIt.push((await timed(["-e", "0"], tmpdir(), process.env)).ms);
    without.push((await timed(["-e", "0"], tmpdir(), bare)).ms);
  }
  return { with: summarize(withIt).median, without: summarize(without).median };
}

/** Client-side floors (median of 5, ms): node starting the CLI; node compiling hello.ts as `run` does. */
async function cliFloors(): Promise<{ help: number; compile: number }> {
  const cwd = tmpdir();
  const compiler = path.join(ROOT, "libs/sandbox/dist/compiler.js");
  const compile = [
    "--input-type=module",
    "-e",
    `const { compileScript } = await import(${JSON.stringify(compiler)}); ` +
      `await compileScript({ file: ${JSON.stringify(HELLO)} });`,
  ];
  await timed([CLI, "--version"], cwd, process.env);
  const help: number[] = [];
  const compiled: number[] = [];
  for (let i = 0; i < 5; i++) {
    help.push((await timed([CLI, "--help"], cwd, process.env)).ms);
    const done = await timed(compile, cwd, process.env);
    if (done.code !== 0) throw new Error(`compiling hello.ts in a child failed: ${done.stderr}`);
    compiled.push(done.ms);
  }
  return { help: summarize(help).median, compile: summarize(compiled).median };
}

export async function cliRun(report: Report): Promise<void> {
  console.log(
    `\n[3] rewind run examples/hello.ts --toolset shop --wait against rewind dev (${RUNS} runs)`,
  );
  const floor = await cliFloors();
  console.log(
    `  client floors: \`node main.js --help\` (node start + CLI) median ${floor.help.toFixed(0)} ms; ` +
      `node + compileScript(hello.ts) median ${floor.compile.toFixed(0)} ms`,
  );
  const ca = await extraCaCost();
  if (ca !== undefined) {
    console.log(
      `  NODE_EXTRA_CA_CERTS is set: \`node -e 0\` median ${ca.with.toFixed(0)} ms, ` +
        `${ca.without.toFixed(0)} ms without it (every process here pays the difference)`,
    );
  }
  const embedded = await devSession("embedded (PGlite, the default)", undefined);
  // A fresh database of its own: `rewind dev` recovers every open run it finds at start-up, and
  // the other figures leave some (their drivers hold leases) in the shared one.
  const database = await createTestDatabase("rewind_bench_dev");
  let postgres: Awaited<ReturnType<typeof devSession>>;
  try {
    postgres = await devSession("Postgres (DATABASE_URL)", database.url);
  } finally {
    await database.drop();
  }
  report.check(
    "3. rewind run --wait, dev on embedded default, median",
    `${embedded.median.toFixed(0)} ms`,
    `≤ ${TARGET_MS} ms`,
    embedded.median <= TARGET_MS,
  );
  report.info("3. … embedded, p90", `${embedded.p90.toFixed(0)} ms`);
  report.info(
    "3. … embedded, first run / compile cache off",
    `${embedded.first.toFixed(0)} / ${embedded.compiling.toFixed(0)} ms`,
  );
  report.check(
    "3. rewind run --wait, dev on Postgres, median",
    `${postgres.median.toFixed(0)} ms`,
    `≤ ${TARGET_MS} ms`,
    postgres.median <= TARGET_MS,
  );
  report.info("3. … Postgres, p90", `${postgres.p90.toFixed(0)} ms`);
  report.info(
    "3. … Postgres, first run / compile cache off",
    `${postgres.first.toFixed(0)} / ${postgres.compiling.toFixed(0)} ms`,
  );
  report.info("3. … embedded, server side (in-process SDK)", `${embedded.server.toFixed(1)} ms`);
  report.info("3. … Postgres, server side (in-process SDK)", `${postgres.server.toFixed(1)} ms`);
  report.info("3. floor: node + CLI --help, median", `${floor.help.toFixed(0)} ms`);
  report.info(
    "3. node + one fetch: plain / --liftoff-only",
    `${embedded.exit.plain.toFixed(0)} / ${embedded.exit.liftoff.toFixed(0)} ms`,
  );
  report.info("3. floor: node + compile hello.ts, median", `${floor.compile.toFixed(0)} ms`);
  if (ca !== undefined)
    report.info(
      "3. node -e 0 with / without NODE_EXTRA_CA_CERTS",
      `${ca.with.toFixed(0)} / ${ca.without.toFixed(0)} ms`,
    );
}
