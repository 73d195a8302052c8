/**
 * A cluster on loopback for the chaos tests: `rewind api` and `rewind worker` as real processes
 * (the built CLI) on a Postgres database and a Redis key prefix of their own, a counting server
 * that witnesses every tool call, and, for the tests that restart them, a private Redis and a
 * private Postgres server, so a restart disturbs no other test.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { Rewind } from "@rewind/sdk";
import { migrate, openSqlClient, openStore } from "@rewind/store";
import { createTestDatabase } from "@rewind/store/testing";

export const root = fileURLToPath(new URL("../../..", import.meta.url));
const cli = path.join(root, "libs/cli/dist/main.js");
export const fixtures = path.join(root, "libs/cli/test/fixtures");

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function until<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await pause(100);
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Every call a tool made to the outside world, by callId: what a real payment API would see. */
export class CountingServer {
  readonly seen = new Map<string, { tool: string; bodies: Set<string>; calls: number }>();
  private server: Server | undefined;
  url = "";

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString()));
      request.on("end", () => {
        const call = JSON.parse(body) as { tool: string; callId: string; body: string };
        const entry = this.seen.get(call.callId) ?? {
          tool: call.tool,
          bodies: new Set(),
          calls: 0,
        };
        entry.bodies.add(call.body);
        entry.calls++;
        this.seen.set(call.callId, entry);
        response.end("ok");
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** One `rewind …` process; its stderr is kept for the failure message. */
export class ServiceProcess {
  log = "";
  ready = false;
  readonly exited: Promise<number | null>;

  constructor(readonly child: ChildProcess) {
    child.stderr!.on("data", (chunk: Buffer) => {
      this.log = (this.log + chunk.toString()).slice(-20_000);
    });
    this.exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    if (!this.alive) return;
    this.child.kill(signal);
    if (signal === "SIGKILL" || signal === "SIGTERM") await this.exited;
  }
}

export interface ClusterOptions {
  databaseUrl?: string;
  redisUrl?: string;
  /** Extra environment for every process (lease length, sticky timeout, …). */
  env?: Record<string, string>;
  toolsFile?: string;
  /** How long a process may take to be ready (default 30 s). */
  startupMs?: number;
}

export class Cluster {
  readonly counter = new CountingServer();
  readonly workers: ServiceProcess[] = [];
  apiProcess: ServiceProcess | undefined;
  quarantineProcess: ServiceProcess | undefined;
  readonly projectorProcesses: ServiceProcess[] = [];
  databaseUrl = "";
  api!: Rewind;
  apiUrl = "";
  /** The API token the cluster's client uses (REWIND_TOKEN for a CLI process). */
  token = "";
  /** A token of the metrics scope: the API's /metrics needs one. */
  metricsToken = "";
  private env: NodeJS.ProcessEnv = {};
  private database: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  private readonly prefix = `rewind-chaos-${randomBytes(4).toString("hex")}`;
  private apiPort = 0;

  constructor(private readonly options: ClusterOptions = {}) {}

  async start(): Promise<void> {
    await this.counter.start();
    let databaseUrl = this.options.databaseUrl;
    if (databaseUrl === undefined) {
      this.database = await createTestDatabase("rewind_chaos");
      databaseUrl = this.database.url;
    }
    this.databaseUrl = databaseUrl;
    const sql = await openSqlClient({ databaseUrl });
    await migrate(sql);
    await sql.close();
    const store = await openStore({ databaseUrl });
    const token = await store.createToken("default", "chaos test");
    this.metricsToken = await store.createToken("default", "prometheus", ["metrics"]);
    await store.close();
    this.env = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      REDIS_URL: this.options.redisUrl ?? process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379",
      REWIND_REDIS_PREFIX: this.prefix,
      COUNTER_URL: this.counter.url,
      ...this.options.env,
    };
    this.apiPort = await freePort();
    this.apiUrl = `http://127.0.0.1:${this.apiPort}`;
    this.token = token;
    this.api = new Rewind({ url: this.apiUrl, token });
    await this.startApi();
  }

  async startApi(): Promise<void> {
    this.apiProcess = this.spawn(["api", "--port", String(this.apiPort)]);
    await until(
      "rewind api to answer",
      async () => (await fetch(`${this.apiUrl}/healthz`)).ok || undefined,
      this.options.startupMs ?? 30_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${this.apiProcess!.log}`);
    });
  }

  /**
   * A worker; with `health`, it serves /healthz and /metrics on a port of its own. With `runtime`,
   * it runs on another Node from another checkout of this repository (one installed and built
   * with that Node: node_modules differ per Node), with that checkout's toolset file.
   */
  async startWorker(
    options: {
      health?: boolean;
      env?: Record<string, string>;
      runtime?: { nodeBin: string; root: string };
    } = {},
  ) {
    const healthPort = options.health ? await freePort() : undefined;
    const from = options.runtime?.root ?? root;
    const toolsFile = this.options.toolsFile ?? path.join(fixtures, "counting-tools.ts");
    const worker = this.spawn(
      ["worker", "--toolset", path.join(from, path.relative(root, toolsFile))],
      {
        ...(healthPort !== undefined ? { REWIND_HEALTH_PORT: String(healthPort) } : {}),
        ...options.env,
      },
      options.runtime,
    );
    this.workers.push(worker);
    await until(
      "the worker to be ready",
      async () => (worker.ready = worker.log.includes("worker ready")),
      this.options.startupMs ?? 30_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${worker.log}`);
    });
    return { worker, healthUrl: healthPort ? `http://127.0.0.1:${healthPort}` : undefined };
  }

  /** `rewind quarantine-service`, serving /healthz and /metrics on a port of its own. */
  async startQuarantineService(env: Record<string, string> = {}) {
    const healthPort = await freePort();
    const service = this.spawn(["quarantine-service"], {
      REWIND_HEALTH_PORT: String(healthPort),
      ...env,
    });
    this.quarantineProcess = service;
    await until(
      "the quarantine service to be ready",
      async () => (service.ready = service.log.includes("quarantine service ready")),
      this.options.startupMs ?? 30_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${service.log}`);
    });
    return { service, healthUrl: `http://127.0.0.1:${healthPort}` };
  }

  /** `rewind projector`, serving /healthz and /metrics on a port of its own. */
  async startProjector(env: Record<string, string> = {}) {
    const healthPort = await freePort();
    const service = this.spawn(["projector"], { REWIND_HEALTH_PORT: String(healthPort), ...env });
    this.projectorProcesses.push(service);
    await until(
      "the projector to be ready",
      async () => (service.ready = service.log.includes("projector ready")),
      30_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${service.log}`);
    });
    return { service, healthUrl: `http://127.0.0.1:${healthPort}` };
  }

  async close(): Promise<void> {
    for (const child of [
      ...this.workers,
      ...this.projectorProcesses,
      this.apiProcess,
      this.quarantineProcess,
    ]) {
      if (child?.alive) child.child.kill("SIGCONT");
      await child?.kill("SIGKILL");
    }
    await this.counter.close();
    const redis = new Redis(this.env.REDIS_URL ?? "redis://127.0.0.1:6379", {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
    });
    try {
      await redis.connect();
      const keys = await redis.keys(`${this.prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
    } catch {
      // a private Redis already stopped
    }
    redis.disconnect();
    await this.database?.drop();
  }

  private spawn(
    args: string[],
    env: Record<string, string> = {},
    runtime?: { nodeBin: string; root: string },
  ): ServiceProcess {
    const node = runtime === undefined ? process.execPath : path.join(runtime.nodeBin, "node");
    const from = runtime?.root ?? root;
    return new ServiceProcess(
      spawn(node, [path.join(from, path.relative(root, cli)), ...args], {
        cwd: from,
        env: { ...this.env, ...env },
        stdio: ["ignore", "ignore", "pipe"],
      }),
    );
  }
}

/** A Redis server of the test's own, so that restarting or flushing it disturbs no other test. */
export async function privateRedis() {
  const port = await freePort();
  let server: ChildProcess | undefined;
  const start = async () => {
    server = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      { stdio: "ignore" },
    );
    const probe = new Redis({
      port,
      host: "127.0.0.1",
      lazyConnect: true,
      retryStrategy: () => null,
    });
    probe.on("error", () => {});
    await until(
      "redis-server to start",
      async () => (await probe.connect().then(() => true)) || undefined,
      10_000,
    );
    probe.disconnect();
  };
  const stop = async () => {
    if (server === undefined || server.exitCode !== null) return;
    const exited = new Promise((resolve) => server!.once("exit", resolve));
    server.kill("SIGKILL");
    await exited;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    async restart(downMs = 1_000) {
      await stop();
      await pause(downMs);
      await start();
    },
    stop,
  };
}

const PG_BIN = (() => {
  const found = spawnSync("sh", ["-c", "ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1"], {
    encoding: "utf8",
  });
  return found.stdout.trim();
})();

/**
 * A Postgres server of the test's own (initdb in a temporary folder, run as the `postgres` user
 * because Postgres refuses to run as root), so that restarting it disturbs no other test.
 */
export async function privatePostgres() {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), "rewind-pg-"));
  chmodSync(dir, 0o700);
  const asPostgres = (args: string[]) => {
    const isRoot = process.getuid?.() === 0;
    const result = isRoot
      ? spawnSync("runuser", ["-u", "postgres", "--", ...args], { encoding: "utf8" })
      : spawnSync(args[0]!, args.slice(1), { encoding: "utf8" });
    if (result.status !== 0)
      throw new Error(`${args.join(" ")} failed: ${result.stderr || result.stdout}`);
  };
  if (process.getuid?.() === 0) {
    const pg = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
    const gid = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" });
    chownSync(dir, Number(pg.stdout), Number(gid.stdout));
  }
  const data = path.join(dir, "data");
  asPostgres([`${PG_BIN}/initdb`, "-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
  const pgCtl = (action: string, extra: string[] = []) =>
    asPostgres([
      `${PG_BIN}/pg_ctl`,
      "-D",
      data,
      "-l",
      path.join(dir, "log"),
      "-w",
      "-o",
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=on -c synchronous_commit=on`,
      ...extra,
      action,
    ]);
  pgCtl("start");
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: () => pgCtl("stop", ["-m", "immediate"]),
    start: () => pgCtl("start"),
    async remove() {
      try {
        pgCtl("stop", ["-m", "immediate"]);
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
