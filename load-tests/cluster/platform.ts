/**
 * The cluster under test, every part a process of its own from the built CLI: a fresh Postgres
 * database and a Redis key prefix of its own, `rewind migrate`, a token from `rewind token
 * create`, `rewind api` on a free loopback port and N `rewind worker --toolset tools.ts`.
 * `close()` stops them all, drops the database and deletes every key under the prefix.
 */
import { randomBytes } from "node:crypto";
import { Agent } from "node:http";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import pg from "pg";
import { Rewind, httpFetch } from "@rewind/sdk";
import { createTestDatabase } from "@rewind/store/testing";
import { launch, runCli, stop, type Child } from "./processes.js";
import { childPids } from "./proc.js";
import type { ProfileWindow } from "./profile-summary.js";

const TOOLS = fileURLToPath(new URL("./tools.ts", import.meta.url));
const QUERY_COUNTER = fileURLToPath(new URL("./query-counter.mjs", import.meta.url));
const START_TIMEOUT_MS = 60_000;

export interface PlatformOptions {
  workers: number;
  redisUrl: string;
  logDir: string;
  /** Worker `--concurrency` (activations at once); the CLI's default when unset. */
  concurrency?: number;
  /** Run the API and workers under `node --cpu-prof` (profiles in logDir/profiles). */
  cpuProf: boolean;
  /** Load query-counter.mjs into the API and workers (counts in logDir/counts). */
  countQueries: boolean;
  /** Further environment for the API and workers (REWIND_HOP_TRACE, REWIND_CHANGE_NOTICES). */
  env?: Record<string, string>;
  /** Further environment for the workers only (REWIND_CHANGE_NOTICES=off: the API still hears). */
  workerEnv?: Record<string, string>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Deletes every key under `prefix` (SCAN, not KEYS: Redis is shared). */
export async function deleteKeys(redisUrl: string, prefix: string): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    let deleted = 0;
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 1000 })) {
      const batch = keys as string[];
      if (batch.length > 0) deleted += await redis.del(...batch);
    }
    return deleted;
  } finally {
    redis.disconnect();
  }
}

/**
 * Node options a worker is run with: a young generation of 64 MiB (V8's default is 16) makes
 * fewer scavenges of the host heap, which each run's activations fill quickly; about 10% less
 * worker CPU a run in W1.
 */
export const WORKER_NODE_ARGS = ["--max-semi-space-size=64"];

export class Platform {
  readonly workers: Child[] = [];
  /** Each worker's /metrics address. */
  private readonly metricsUrls = new Map<Child, string>();
  /** The measured stretches of the workloads, for the CPU profiles' summaries. */
  readonly profileWindows: ProfileWindow[] = [];
  /** pid → name of every child started, for the CPU profiles they leave. */
  readonly names = new Map<number, string>();
  /** The log file of every child started (stopped ones too). */
  readonly logFiles: string[] = [];
  private api: Child | undefined;
  /** `rewind projector`, when a workload started it. */
  private projector: Child | undefined;
  private generation = 0;
  private closing: Promise<string[]> | undefined;

  /** Where the API's and workers' logs are (and profiles and query counts, when asked). */
  get logDir(): string {
    return this.options.logDir;
  }

  private constructor(
    private readonly options: PlatformOptions,
    readonly databaseUrl: string,
    private readonly dropDatabase: () => Promise<void>,
    /** A small pool on the bench database: the harness observes runs with SQL. */
    readonly db: pg.Pool,
    readonly prefix: string,
    readonly env: NodeJS.ProcessEnv,
  ) {}

  url = "";
  token = "";
  client!: Rewind;
  // The load generator shares the machine: node:http with keep-alive costs it a sixth of fetch's
  // CPU per request, which would otherwise be taken from the platform under test.
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 256 });

  /** Creates the database; nothing is started yet (the floors run on a quiet machine first). */
  /**
   * A cluster for one benchmark, its logs in a fresh folder named after it (printed), against
   * REDIS_URL (default the machine's Redis), without profiles or query counts.
   */
  static forBench(
    name: string,
    options: Pick<PlatformOptions, "workers" | "env" | "workerEnv" | "concurrency"> &
      Partial<Pick<PlatformOptions, "cpuProf" | "countQueries">>,
  ): Promise<Platform> {
    const logDir = mkdtempSync(path.join(tmpdir(), `rewind-${name}-bench-`));
    console.log(`${name}: logs in ${logDir}`);
    return Platform.create({
      redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
      logDir,
      cpuProf: false,
      countQueries: false,
      ...options,
    });
  }

  static async create(options: PlatformOptions): Promise<Platform> {
    const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
    try {
      await redis.connect();
      await redis.ping();
    } catch (error) {
      throw new Error(
        `Redis at ${options.redisUrl} is unreachable (${(error as Error).message}): start it or set REDIS_URL`,
      );
    } finally {
      redis.disconnect();
    }
    const database = await createTestDatabase("rewind_cluster_bench");
    const prefix = `rewind-cluster-bench-${randomBytes(4).toString("hex")}`;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: database.url,
      REDIS_URL: options.redisUrl,
      REWIND_REDIS_PREFIX: prefix,
      REWIND_BLOB_URL: path.join(options.logDir, "blobs"),
      REWIND_HOST: "127.0.0.1",
      // Workers serve /metrics on a free port (read from their log): the harness scrapes them.
      REWIND_HEALTH_PORT: "0",
      // Calls in flight at a SIGTERM get 3 s (the trivial tool needs none of it), inside the 5 s
      // the leash gives a stopping process (REWIND_BENCH_EXIT_MS).
      REWIND_SHUTDOWN_GRACE_MS: "3000",
      // The workloads start runs faster than a namespace's default 500 a second (W1 sends 2,000
      // at once, the open loop 400 a second with bursts): raised, as an operator expecting such
      // load would, so the figures measure the platform rather than the limit (tested apart).
      REWIND_LIMIT_STARTS_PER_SECOND: "100000",
      NO_COLOR: "1",
      ...options.env,
    };
    delete env.REWIND_TOKEN;
    delete env.REWIND_URL;
    const db = new pg.Pool({ connectionString: database.url, max: 4 });
    return new Platform(options, database.url, () => database.drop(), db, prefix, env);
  }

  /** `rewind migrate`, a token, `rewind api`, then the workers. */
  async start(): Promise<void> {
    await runCli(["migrate"], this.env);
    this.token = (
      await runCli(["token", "create", "--label", "cluster bench"], this.env)
    ).stdout.trim();
    if (!/^\S+$/.test(this.token))
      throw new Error(`rewind token create printed no token: ${this.token}`);
    const port = await freePort();
    this.url = `http://127.0.0.1:${port}`;
    this.api = launch("api", ["api", "--port", String(port)], this.launchOptions());
    this.names.set(this.api.pid, "api");
    this.logFiles.push(this.api.logFile);
    await this.api.waitFor(/API listening/, START_TIMEOUT_MS);
    const health = await fetch(`${this.url}/healthz`);
    if (!health.ok)
      throw new Error(`rewind api answers ${health.status} on /healthz:\n${this.api.tail()}`);
    this.client = new Rewind({
      url: this.url,
      token: this.token,
      fetch: httpFetch({ agent: this.agent }),
    });
    await this.scaleWorkers(this.options.workers);
  }

  /** Starts or stops workers (gracefully, newest first) until `n` run. */
  async scaleWorkers(n: number): Promise<void> {
    const starting: Promise<Child>[] = [];
    for (let i = this.workers.length; i < n; i++) starting.push(this.startWorker());
    await Promise.all(starting);
    while (this.workers.length > n) await this.stopWorker(this.workers.at(-1)!);
  }

  async startWorker(): Promise<Child> {
    const name = `worker-${++this.generation}`;
    const args = ["worker", "--toolset", TOOLS];
    if (this.options.concurrency !== undefined)
      args.push("--concurrency", String(this.options.concurrency));
    const options = this.launchOptions();
    options.env = { ...options.env, ...this.options.workerEnv };
    // As workers are deployed (services/worker/HOW_IT_WORKS.md, Configuration).
    options.nodeArgs.unshift(...WORKER_NODE_ARGS);
    const worker = launch(name, args, options);
    this.workers.push(worker);
    this.names.set(worker.pid, name);
    this.logFiles.push(worker.logFile);
    await worker.waitFor(/worker ready/, START_TIMEOUT_MS);
    const health = worker.find(/health and metrics on (\S+)\/healthz/);
    if (health) this.metricsUrls.set(worker, `${health[1]}/metrics`);
    return worker;
  }

  /** SIGTERM: the worker stops taking activations and hands its hot runs back (their leases). */
  async stopWorker(worker: Child): Promise<{ graceful: boolean; hung: boolean; ms: number }> {
    const t0 = performance.now();
    const outcome = await stop(worker);
    const at = this.workers.indexOf(worker);
    if (at >= 0) this.workers.splice(at, 1);
    this.metricsUrls.delete(worker);
    return { ...outcome, ms: performance.now() - t0 };
  }

  /**
   * `rewind projector` (every projection: the OpenTelemetry sink and webhooks), with its
   * /metrics address. `env` points it at its backends (OTEL_*, REWIND_WEBHOOK_ALLOW).
   */
  async startProjector(env: Record<string, string>): Promise<{ metricsUrl: string }> {
    const options = this.launchOptions();
    const port = await freePort();
    options.env = { ...options.env, ...env, REWIND_HEALTH_PORT: String(port) };
    this.projector = launch("projector", ["projector"], options);
    this.names.set(this.projector.pid, "projector");
    this.logFiles.push(this.projector.logFile);
    await this.projector.waitFor(/projector ready/, START_TIMEOUT_MS);
    return { metricsUrl: `http://127.0.0.1:${port}/metrics` };
  }

  async stopProjector(): Promise<void> {
    if (this.projector !== undefined) await stop(this.projector);
    this.projector = undefined;
  }

  /** The running workers with their /metrics address (when they serve one). */
  workerMetrics(): { name: string; metricsUrl?: string }[] {
    return this.workers.map((w) => {
      const url = this.metricsUrls.get(w);
      return url === undefined ? { name: w.name } : { name: w.name, metricsUrl: url };
    });
  }

  /** The worker whose lease owner name (`worker:host:pid:…`) names this pid. */
  workerOf(owner: string | null): Child | undefined {
    const pid = Number(owner?.split(":")[2]);
    return this.workers.find((w) => w.pid === pid);
  }

  /** name → pid of every live child (for query counts: each answers SIGUSR2). */
  pids(): Map<string, number> {
    const out = new Map<string, number>();
    for (const child of [this.api, ...this.workers, this.projector])
      if (child?.alive) out.set(child.name, child.pid);
    return out;
  }

  /**
   * The children and each worker's sandbox processes (where its scripts run, named
   * `<worker>.sandbox-<n>`): for CPU readings.
   */
  cpuPids(): Map<string, number> {
    const out = this.pids();
    for (const worker of this.workers)
      if (worker.alive)
        childPids(worker.pid).forEach((pid, i) => out.set(`${worker.name}.sandbox-${i + 1}`, pid));
    return out;
  }

  /** Postgres backends serving the bench database right now. */
  async backendPids(): Promise<Set<number>> {
    const name = new URL(this.databaseUrl).pathname.slice(1);
    const { rows } = await this.db.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = $1",
      [name],
    );
    return new Set(rows.map((r) => r.pid));
  }

  /** The tail of every child's log: for a failure's message. */
  logs(): string {
    return [this.api, ...this.workers, this.projector]
      .filter((c): c is Child => c !== undefined)
      .map((c) => `--- ${c.name} (pid ${c.pid}, ${c.logFile}) ---\n${c.tail()}`)
      .join("\n");
  }

  /**
   * Stops every child (gracefully when `graceful`), drops the database, deletes the keys. A
   * second call (an interrupt during the first) waits for the same cleanup.
   */
  close(graceful = true): Promise<string[]> {
    this.closing ??= this.cleanUp(graceful);
    return this.closing;
  }

  private async cleanUp(graceful: boolean): Promise<string[]> {
    const problems: string[] = [];
    const children = [
      ...this.workers,
      ...(this.projector ? [this.projector] : []),
      ...(this.api ? [this.api] : []),
    ];
    this.agent.destroy();
    const stops = await Promise.all(children.map((c) => stop(c, graceful ? 15_000 : 0)));
    stops.forEach(({ hung }, i) => {
      if (hung && graceful)
        problems.push(
          `${children[i]!.name} did not exit by itself after SIGTERM (the leash ended it)`,
        );
    });
    await this.db.end().catch((e: unknown) => problems.push(`closing the pool: ${String(e)}`));
    await this.dropDatabase().catch((e: unknown) =>
      problems.push(`dropping the database: ${String(e)}`),
    );
    await deleteKeys(this.options.redisUrl, this.prefix).catch((e: unknown) =>
      problems.push(`deleting Redis keys ${this.prefix}*: ${String(e)}`),
    );
    return problems;
  }

  get countsDir(): string {
    return path.join(this.options.logDir, "counts");
  }

  get profileDir(): string {
    return path.join(this.options.logDir, "profiles");
  }

  private launchOptions() {
    const nodeArgs: string[] = [];
    if (this.options.cpuProf) {
      mkdirSync(this.profileDir, { recursive: true });
      nodeArgs.push("--cpu-prof", "--cpu-prof-dir", this.profileDir);
    }
    let env = this.env;
    if (this.options.countQueries) {
      mkdirSync(this.countsDir, { recursive: true });
      nodeArgs.push("--import", QUERY_COUNTER);
      env = { ...env, REWIND_BENCH_COUNTS_DIR: this.countsDir };
    }
    return { env, logDir: this.options.logDir, nodeArgs };
  }
}
