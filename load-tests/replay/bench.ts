/**
 * `rewind replay --script fixed.ts --all` over 1,000 open runs of 100 journaled calls each:
 * "≤ 10 s on this machine, using both cores".
 *
 * The runs are real: each is executed in mock mode (100 tool calls, then it waits for a signal),
 * and its journal is stored through the store, as a worker's commits would have stored it, in a
 * fresh Postgres database. The API (createApi, as `rewind api` builds it) serves them from this
 * process; the real CLI (libs/cli/dist/main.js) is timed from spawn to exit as a child process.
 * Then the same with a replay pool of one thread, for comparison.
 * Run with `npm run bench:replay -w load-tests` (after `npm run build`). Exits 1 if missed.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createApi } from "@rewind/api";
import { defineToolset, newRunId, type JournalEntry, type RunStartedEntry } from "@rewind/core";
import { ReplayPool, runInProcess } from "@rewind/executor";
import { Sandbox, compileScript } from "@rewind/sandbox";
import type { Store } from "@rewind/store";
import { openBenchDatabase, type BenchDatabase } from "../durable/db.js";
import { Report } from "../sandbox/stats.js";

const RUNS = Number(process.env.REPLAY_RUNS ?? 1000);
const CALLS = 100;
const TARGET_MS = 10_000;
const ROUNDS = 5;
const CLI = fileURLToPath(new URL("../../libs/cli/dist/main.js", import.meta.url));

const ORIGINAL = `import { tools, waitForSignal } from "rewind";
export default async function main(input: { order: number }) {
  let total = 0;
  for (let line = 0; line < ${CALLS}; line++) {
    const { cents } = await tools.price({ order: input.order, line });
    total += cents;
  }
  const paid = await waitForSignal<{ ok: boolean }>("paid");
  return { total, paid: paid.ok };
}
`;
/** The deploy being gated: a refactor that keeps every call (so every run is compatible). */
const FIXED = `import { tools, waitForSignal } from "rewind";
const priceOf = (order: number, line: number) => tools.price({ order, line });
export default async function main({ order }: { order: number }) {
  let sum = 0;
  for (let i = 0; i < ${CALLS}; i++) sum += (await priceOf(order, i)).cents;
  const payment = await waitForSignal<{ ok: boolean }>("paid");
  return { total: sum, paid: payment.ok === true };
}
`;
const CHANGED = FIXED.replace(
  "tools.price({ order, line })",
  "tools.price({ order, line: line + 1 })",
);

const toolset = defineToolset("shop", {
  price: async (args: { order: number; line: number }) => ({
    cents: 100 + ((args.order * 7 + args.line) % 50),
  }),
});

/** Executes the runs in mock mode and stores each journal as its worker would have committed it. */
async function seed(store: Store): Promise<string[]> {
  const script = await compileScript({ source: ORIGINAL, filename: "order.ts" });
  await store.putScript("default", script);
  const sandbox = new Sandbox({ mode: "sync" });
  const t0 = performance.now();
  const journals: JournalEntry[][] = [];
  for (let order = 0; order < RUNS; order++) {
    const run = await runInProcess({
      script,
      sandbox,
      toolset,
      runId: newRunId(),
      input: { order },
    });
    if (run.status !== "waiting" || run.journal.length !== 1 + 2 * CALLS)
      throw new Error(`seed run ${order}: ${run.status}, ${run.journal.length} entries`);
    journals.push(run.journal);
  }
  sandbox.dispose();
  const executed = performance.now() - t0;
  const t1 = performance.now();
  const BATCH = 50; // one group commit carries the journals of 50 runs
  for (let i = 0; i < journals.length; i += BATCH) {
    const batch = journals.slice(i, i + BATCH);
    const leases = await Promise.all(
      batch.map(async (journal) => {
        const started = journal[0] as RunStartedEntry;
        await store.createRun({ started, ttlMs: 30 * 86_400_000 });
        const lease = await store.acquireLease(started.runId, "bench-seed", 60_000);
        if (lease === undefined) throw new Error(`no lease on ${started.runId}`);
        return lease;
      }),
    );
    const outcomes = await store.commit(
      batch.map((journal, k) => ({
        lease: leases[k]!,
        afterSeq: 1,
        entries: journal.slice(1),
        status: "waiting" as const,
      })),
    );
    if (outcomes.some((o) => o !== "ok")) throw new Error(`seed commit: ${outcomes.join(",")}`);
    await Promise.all(leases.map((lease) => store.releaseLease(lease)));
  }
  console.log(
    `  seeded ${RUNS} waiting runs of ${CALLS} calls (${1 + 2 * CALLS} entries each): executed in ` +
      `${(executed / 1000).toFixed(1)} s, stored in ${((performance.now() - t1) / 1000).toFixed(1)} s`,
  );
  return journals.map((journal) => (journal[0] as RunStartedEntry).runId);
}

interface Done {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function cli(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Done> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr, ms: performance.now() - t0 }));
  });
}

/** An API over the bench's store with a replay pool of `threads`, listening on a free port. */
async function withApi<T>(
  store: Store,
  threads: number,
  use: (url: string) => Promise<T>,
): Promise<T> {
  const replays = new ReplayPool({ threads });
  const api = createApi({ store, doorbell: { ring: async () => {} }, version: "bench", replays });
  await api.listen({ port: 0, host: "127.0.0.1" });
  try {
    return await use(`http://127.0.0.1:${(api.server.address() as AddressInfo).port}`);
  } finally {
    await api.close();
    await replays.close();
  }
}

/** CPU time this process (the API: its main thread and its replay threads) used, in ms. */
let apiCpuMs = 0;

async function replayAll(url: string, token: string, dir: string, label: string): Promise<number> {
  const env = { ...process.env, REWIND_URL: url, REWIND_TOKEN: token, NO_COLOR: "1" };
  const cpu = process.cpuUsage();
  const done = await cli(["replay", "--script", "fixed.ts", "--all"], dir, env);
  const used = process.cpuUsage(cpu);
  apiCpuMs = (used.user + used.system) / 1000;
  const rows = done.stdout
    .trim()
    .split("\n")
    .filter((l) => l.includes("compatible"));
  if (
    done.code !== 0 ||
    rows.length !== RUNS ||
    !done.stderr.includes(`${RUNS} of ${RUNS} runs compatible`)
  )
    throw new Error(
      `replay --all (${label}) exited ${done.code}: ${rows.length} rows\n${done.stderr}`,
    );
  return done.ms;
}

const report = new Report();
let db: BenchDatabase | undefined;
const dir = mkdtempSync(path.join(tmpdir(), "rewind-bench-replay-"));
let failure: unknown;
console.log(
  `Rewind replay --all benchmark: node ${process.version}, ${RUNS} open runs of ${CALLS} calls`,
);
try {
  db = await openBenchDatabase();
  const ids = await seed(db.store);
  const token = await db.store.createToken("default", "bench");
  writeFileSync(path.join(dir, "fixed.ts"), FIXED);
  writeFileSync(path.join(dir, "changed.ts"), CHANGED);

  const cores: number[] = [];
  const pooled = await withApi(db.store, 2, async (url) => {
    await replayAll(url, token, dir, "warm-up"); // threads started, caches warm: not counted
    const times: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      times.push(await replayAll(url, token, dir, `round ${round + 1}`));
      cores.push(apiCpuMs / times.at(-1)!);
    }
    // The checks are real: a changed call is caught, in one run as in all.
    const env = { ...process.env, REWIND_URL: url, REWIND_TOKEN: token, NO_COLOR: "1" };
    const one = await cli(["replay", ids[0]!, "--script", "changed.ts"], dir, env);
    if (one.code !== 1 || !one.stderr.includes("diverges from its journal at seq 2"))
      throw new Error(`a changed script was not caught (${one.code}): ${one.stderr}`);
    return times;
  });
  const single = await withApi(db.store, 1, async (url) => {
    await replayAll(url, token, dir, "warm-up, 1 thread");
    return [await replayAll(url, token, dir, "1 thread")];
  });
  pooled.sort((a, b) => a - b);
  const median = pooled[Math.floor(pooled.length / 2)]!;
  console.log(
    `  rewind replay --script fixed.ts --all, 2 replay threads: ` +
      `${pooled.map((t) => (t / 1000).toFixed(2)).join(" / ")} s (${ROUNDS} rounds)`,
  );
  console.log(
    `  the API process kept ${cores.map((c) => c.toFixed(2)).join(" / ")} cores busy (CPU time / wall time)`,
  );
  console.log(`  the same with 1 replay thread: ${(single[0]! / 1000).toFixed(2)} s`);
  report.check(
    `6. replay --all, ${RUNS} runs × ${CALLS} calls, median`,
    `${(median / 1000).toFixed(2)} s (${((median / TARGET_MS) * 100).toFixed(0)}% of target)`,
    `≤ ${TARGET_MS / 1000} s`,
    median <= TARGET_MS,
  );
  report.info("6. … with one replay thread", `${(single[0]! / 1000).toFixed(2)} s`);
  report.info("6. … cores the API kept busy, median", `${[...cores].sort()[1]!.toFixed(2)}`);
  report.info("6. … speed-up of 2 threads over 1", `${(single[0]! / median).toFixed(2)}×`);
} catch (error) {
  failure = error;
  console.error(`\nThe benchmark failed: ${(error as Error).stack ?? String(error)}`);
} finally {
  await db
    ?.close()
    .catch((error: unknown) => console.error(`dropping the database: ${String(error)}`));
  rmSync(dir, { recursive: true, force: true });
}
report.print();
process.exit(report.failed + (failure === undefined ? 0 : 1) === 0 ? 0 : 1);
