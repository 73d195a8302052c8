/**
 * Rewind's services composed as separate processes would be (each with its own store connection
 * and its own BullMQ connection, on one Postgres database and one Redis prefix), so a test can
 * stop and start each of them: the API, workers (one may carry a deliberate platform bug), and
 * the quarantine service.
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { createApi } from "@rewind/api";
import type { Toolset } from "@rewind/core";
import { Executor, WakeUp } from "@rewind/executor";
import { BullMqQueue } from "@rewind/queue";
import { Sandbox } from "@rewind/sandbox";
import { openStore, type Store } from "@rewind/store";
import { createTestDatabase } from "@rewind/store/testing";
import { QuarantineService } from "../src/index.js";

export const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** The platform bug a worker may carry: Math.random answers other than when runs were recorded. */
export const RANDOM_BUG = "Math.random = () => 0.5;";

export interface Cluster {
  url: string;
  /** The Redis key prefix of this cluster's queue and change notices. */
  prefix: string;
  store: Store;
  token: string;
  startApi(): Promise<Api>;
  startWorker(options?: { bug?: string; name?: string }): Promise<Service>;
  startQuarantine(): Promise<Service & { service: QuarantineService }>;
  /** Stops every worker started so far. */
  stopWorkers(): Promise<void>;
  close(): Promise<void>;
}

export interface Service {
  close(): Promise<void>;
}

export interface Api extends Service {
  app: ReturnType<typeof createApi>;
}

export async function startCluster(toolsets: readonly Toolset[]): Promise<Cluster> {
  const database = await createTestDatabase("rewind_quarantine");
  const prefix = `rewind-quarantine-${randomBytes(4).toString("hex")}`;
  const open = () => openStore({ databaseUrl: database.url, migrate: true });
  const store = await open();
  const token = await store.createToken("acme", "ops-oncall");
  const running = new Set<Service>();
  const track = <S extends Service>(service: S): S => {
    const close = service.close.bind(service);
    service.close = async () => {
      running.delete(service);
      await close();
    };
    running.add(service);
    return service;
  };
  const queue = () => BullMqQueue.connect({ redisUrl: REDIS_URL, prefix, stickyTimeoutMs: 200 });
  let workers = 0;
  const liveWorkers = new Set<Service>();

  return {
    url: database.url,
    prefix,
    store,
    token,
    async startApi() {
      const [apiStore, doorbell] = [await open(), await queue()];
      const app = createApi({ store: apiStore, doorbell, version: "0.0.0-test", pollMs: 50 });
      await app.ready();
      return track({
        app,
        async close() {
          await app.close();
          await doorbell.close();
          await apiStore.close();
        },
      });
    },
    async startWorker(options = {}) {
      const [workerStore, activations] = [await open(), await queue()];
      const sandbox = new Sandbox({
        mode: "async",
        ...(options.bug === undefined ? {} : { testOnlyPlatformBug: options.bug }),
      });
      const owner = `${options.name ?? "worker"}-${++workers}`;
      const executor = new Executor({
        store: workerStore,
        sandbox,
        toolsets: new Map(toolsets.map((t) => [t.name, t] as const)),
        owner,
        leaseTtlMs: 5_000,
        build: options.bug === undefined ? "rewind test" : "rewind test (with a platform bug)",
      });
      // The epochs this runtime serves, the one its new runs start in among them.
      activations.consume((runId) => executor.activate(runId), {
        epochs: executor.epochs,
        holder: owner,
      });
      const wake = new WakeUp(workerStore, (route) => activations.ring(route), {
        pollMs: 100,
        strandedAfterMs: 500,
      });
      wake.start();
      const worker = track({
        async close() {
          liveWorkers.delete(worker);
          wake.stop();
          await activations.stopConsuming();
          await executor.close();
          await activations.close();
          sandbox.dispose();
          await workerStore.close();
        },
      });
      liveWorkers.add(worker);
      return worker;
    },
    async stopWorkers() {
      for (const worker of [...liveWorkers]) await worker.close();
    },
    async startQuarantine() {
      const [serviceStore, doorbell] = [await open(), await queue()];
      const service = new QuarantineService({
        store: serviceStore,
        doorbell,
        owner: `quarantine-${randomBytes(3).toString("hex")}`,
        pollMs: 100,
        gaugeEveryMs: 200,
      });
      service.start();
      return track({
        service,
        async close() {
          await service.stop();
          await doorbell.close();
          await serviceStore.close();
        },
      });
    },
    async close() {
      for (const service of [...running]) await service.close();
      await store.close();
      await database.drop();
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    },
  };
}

export async function until(
  check: () => Promise<boolean> | boolean,
  what: string,
  ms = 15_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
