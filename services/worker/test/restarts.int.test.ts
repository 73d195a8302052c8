/**
 * Issue 4's acceptance tests: the cluster (`rewind api` and two `rewind worker` processes) under
 * load while its Redis is flushed and restarted, and while its Postgres stops for a few seconds.
 * Redis is a doorbell, not a store: a flush loses no run (the reconciler rings again what Redis
 * forgot). Postgres holds the journal: while it is down the API answers 503 and says to retry,
 * the workers retry by themselves, and when it is back every run completes. In both, no process
 * restarts, no run fails, each journal ends once, and each callId reached the outside with one body.
 *
 * Both restart servers of their own (privateRedis, privatePostgres): the shared ones are never
 * touched.
 */
import path from "node:path";
import { Redis } from "ioredis";
import { afterEach, expect, it } from "vitest";
import { compileScript, type CompiledScript } from "@rewind/sandbox";
import { RewindApiError, type RunStatus } from "@rewind/sdk";
import {
  Cluster,
  fixtures,
  pause,
  privatePostgres,
  privateRedis,
  until,
  type ServiceProcess,
} from "./cluster-harness.js";

const LOAD = 100;
/** Each step sleeps about a second: a steps.ts run takes 6 to 8 s on an idle cluster. */
const steps = (): Promise<CompiledScript> =>
  compileScript({ file: path.join(fixtures, "steps.ts") });

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

it("loses no run when Redis is flushed and then restarted during load", async () => {
  const redis = await privateRedis();
  cleanups.push(() => redis.stop());
  const cluster = new Cluster({ redisUrl: redis.url });
  cleanups.push(() => cluster.close());
  await withLogs(cluster, async () => {
    await cluster.start();
    await cluster.startWorker();
    // This one keeps (almost) no run hot: its runs' timers fire from Postgres through the
    // reconciler and the doorbell, so what Redis forgets is felt at every step, not only at start.
    await cluster.startWorker({ env: { REWIND_MAX_HOT_MB: "1" } });
    const script = await steps();

    // Runs keep arriving (10 every 500 ms) while Redis is flushed, then stopped and started again.
    const loading = startRuns(cluster, script, LOAD, 0, 500);
    await pause(1_500);
    // Ten runs whose only ring is flushed before any worker takes it (both are paused): only the
    // reconciler can find them again.
    for (const worker of cluster.workers) worker.child.kill("SIGSTOP");
    const forgotten = await startRuns(cluster, script, 10, LOAD);
    const admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    await admin.flushall();
    admin.disconnect();
    for (const worker of cluster.workers) worker.child.kill("SIGCONT");
    const flushedAt = performance.now();
    await pause(1_500);
    await redis.restart(1_000);
    const restartedAt = performance.now();
    const before = await loading;

    // Runs started after the restart: nothing was restarted but Redis, yet they go through.
    const after = await startRuns(cluster, script, 20, LOAD + 10);
    const afterStarted = performance.now();
    const forgottenDone = await allEnded(cluster, forgotten, 45_000);
    const afterDone = await allEnded(cluster, after, 45_000);
    const beforeDone = await allEnded(cluster, [...before, ...forgotten], 60_000);
    console.log(
      `Redis flushed, then down 1 s from ${ms(restartedAt - flushedAt - 1_000)} later: ` +
        `the 10 runs whose rings were flushed ended ${ms(forgottenDone - flushedAt)} after the flush; ` +
        `all ${LOAD + 10} runs started around it ${ms(beforeDone - restartedAt)} after the restart; ` +
        `20 started after it ended within ${ms(afterDone - afterStarted)} (an undisturbed run takes 6-8 s)`,
    );
    await checkOutcome(cluster, [...before, ...forgotten, ...after]);
  });
}, 120_000);

it("answers 503 while Postgres is down, and completes every run once it is back", async () => {
  const postgres = await privatePostgres();
  cleanups.push(() => postgres.remove());
  const cluster = new Cluster({ databaseUrl: postgres.url });
  cleanups.push(() => cluster.close());
  await withLogs(cluster, async () => {
    await cluster.start();
    await cluster.startWorker();
    await cluster.startWorker();
    const script = await steps();
    const ids = await startRuns(cluster, script, LOAD, 0);

    await pause(2_500);
    postgres.stop();
    const stoppedAt = performance.now();
    const down = await whileDown(cluster, ids[0]!, script);
    await pause(Math.max(0, 5_000 - (performance.now() - stoppedAt)));
    postgres.start();
    const startedAt = performance.now();
    await until(
      "/readyz to answer 200 again",
      async () => (await fetch(`${cluster.apiUrl}/readyz`)).ok,
      15_000,
    );
    const readyAt = performance.now();

    // No process was restarted: the API and the workers reconnect by themselves.
    const after = await startRuns(cluster, script, 10, LOAD);
    const done = await allEnded(cluster, [...ids, ...after], 75_000);
    console.log(
      `Postgres down ${ms(startedAt - stoppedAt)}; meanwhile ${down}; once it was back, ` +
        `/readyz answered 200 after ${ms(readyAt - startedAt)} and all ${LOAD + 10} runs ended ` +
        `after ${ms(done - startedAt)} (an undisturbed run takes 6-8 s)`,
    );
    await checkOutcome(cluster, [...ids, ...after]);
  });
}, 120_000);

/** What the API answers while the database is down: 503 with a body that says what and to retry. */
async function whileDown(cluster: Cluster, runId: string, script: CompiledScript) {
  const refusals = {
    "GET /v1/runs/:id": await cluster.api.runs.get(runId).catch((error: unknown) => error),
    "POST /v1/runs": await cluster.api.runs
      .start({ script, input: { id: -1 }, toolset: "shop" })
      .catch((error: unknown) => error),
    "GET /readyz": await fetch(`${cluster.apiUrl}/readyz`).then(async (response) => {
      expect(response.headers.get("content-type")).toMatch(/^application\/json/);
      const { error } = (await response.json()) as { error: { code: string; message: string } };
      return new RewindApiError(response.status, error.code, error.message);
    }),
  };
  for (const [request, refusal] of Object.entries(refusals)) {
    expect(refusal, request).toBeInstanceOf(RewindApiError);
    const { status, code, message } = refusal as RewindApiError;
    expect({ status, code }, `${request}: ${message}`).toEqual({
      status: 503,
      code: "UNAVAILABLE",
    });
    expect(message, request).toMatch(/database/i);
    expect(message, request).toMatch(/retry/i);
  }
  const healthz = await fetch(`${cluster.apiUrl}/healthz`);
  expect(healthz.status, "/healthz while the database is down").toBe(200);
  return `${Object.keys(refusals).join(", ")} answered 503, /healthz 200`;
}

async function startRuns(
  cluster: Cluster,
  script: CompiledScript,
  count: number,
  first: number,
  /** Between batches of 10. */
  paceMs = 0,
): Promise<string[]> {
  const ids: string[] = [];
  for (let batch = 0; batch < count; batch += 10) {
    if (batch > 0) await pause(paceMs);
    const started = await Promise.all(
      Array.from({ length: Math.min(10, count - batch) }, (_, i) =>
        cluster.api.runs.start({ script, input: { id: first + batch + i }, toolset: "shop" }),
      ),
    );
    ids.push(...started.map((run) => run.id));
  }
  return ids;
}

/** Waits until every run has ended (whatever its status); resolves with the time it saw that. */
async function allEnded(cluster: Cluster, ids: readonly string[], timeoutMs: number) {
  let statuses = new Map<string, RunStatus>();
  await until(
    `${ids.length} runs to end`,
    async () => {
      statuses = await runStatuses(cluster);
      return ids.every((id) => ENDED.has(statuses.get(id) ?? "queued"));
    },
    timeoutMs,
  ).catch((error: Error) => {
    const counts = new Map<string, number>();
    for (const id of ids) {
      const status = statuses.get(id) ?? "unknown";
      counts.set(status, (counts.get(status) ?? 0) + 1);
    }
    throw new Error(`${error.message}; statuses: ${JSON.stringify(Object.fromEntries(counts))}`);
  });
  return performance.now();
}

const ENDED = new Set<RunStatus>(["completed", "failed", "cancelled", "quarantined"]);

async function runStatuses(cluster: Cluster): Promise<Map<string, RunStatus>> {
  const statuses = new Map<string, RunStatus>();
  let before: string | undefined;
  do {
    const page = await cluster.api.runs.list({ limit: 500, ...(before ? { before } : {}) });
    for (const run of page.runs) statuses.set(run.id, run.status);
    before = page.next;
  } while (before !== undefined);
  return statuses;
}

/**
 * Every run completed (none failed), with one run.completed entry and no gap in its journal;
 * the outside world saw each callId with one body and every call of every run; every process
 * is still the one started at the beginning.
 */
async function checkOutcome(cluster: Cluster, ids: readonly string[]): Promise<void> {
  const statuses = await runStatuses(cluster);
  const notCompleted = ids.filter((id) => statuses.get(id) !== "completed");
  const failures = await Promise.all(
    notCompleted.slice(0, 3).map(async (id) => {
      const run = await cluster.api.runs.get(id);
      return `${id} ${run.status}: ${run.error?.message ?? ""}`;
    }),
  );
  expect(failures, `${notCompleted.length} of ${ids.length} runs did not complete`).toEqual([]);
  for (const id of ids) {
    const { entries } = await cluster.api.runs.journal(id);
    expect(
      entries.map((entry) => entry.seq),
      `${id}: seqs`,
    ).toEqual(entries.map((_, i) => i + 1));
    const ends = entries.filter((e) => e.kind === "run.completed" || e.kind === "run.failed");
    expect(
      ends.map((e) => e.kind),
      `${id}: its end`,
    ).toEqual(["run.completed"]);
  }
  const twoBodies = [...cluster.counter.seen].filter(([, call]) => call.bodies.size !== 1);
  expect(twoBodies, "callIds seen with more than one body").toEqual([]);
  expect(cluster.counter.seen.size, "calls that reached the outside").toBe(ids.length * 6);
  const exited = [cluster.apiProcess!, ...cluster.workers].filter((p) => !p.alive);
  expect(exited.length, "processes that exited").toBe(0);
}

/** Runs `body`; on failure, the processes' logs go into the message. */
async function withLogs(cluster: Cluster, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    const processes: [string, ServiceProcess | undefined][] = [
      ["api", cluster.apiProcess],
      ...cluster.workers.map((worker, i): [string, ServiceProcess] => [`worker ${i + 1}`, worker]),
    ];
    const logs = processes.map(([name, child]) => {
      if (child === undefined) return "";
      const state = child.alive
        ? "alive"
        : `exited with ${child.child.exitCode ?? child.child.signalCode}`;
      return `\n--- ${name} (${state}) ---\n${child.log.slice(-4_000)}`;
    });
    if (error instanceof Error) error.message += logs.join("");
    throw error;
  }
}

function ms(value: number): string {
  return `${(value / 1000).toFixed(1)} s`;
}
