import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { z } from "zod";
import { RewindError } from "@rewind/core";
import {
  changeNotices,
  milliseconds,
  parseServiceConfig,
  port,
  serviceEnv,
} from "@rewind/core/service-config";
import {
  EpochMigrator,
  Executor,
  SandboxProcesses,
  WakeUp,
  activationFailureLog,
  quarantineLog,
  announceWorker,
  publishToolsets,
} from "@rewind/executor";
import { BullMqQueue, RunNoticePublisher, type Delivery } from "@rewind/queue";
import { epochSupport } from "@rewind/sandbox";
import type { Toolset } from "@rewind/sdk";
import { ENDED_STATUSES, openStore, type RunStatus } from "@rewind/store";
import { hop, metrics, onScrape, runFields, serveAs, startHealthServer } from "@rewind/telemetry";
import { zeroWorkerSeries } from "./metric-series.js";

const Config = z.object({
  ...serviceEnv,
  /** How long a run stays this worker's without renewal: a paused worker loses it after this. */
  REWIND_LEASE_MS: milliseconds("REWIND_LEASE_MS", 500, 10_000),
  /** How long a hot run's activation waits for this worker before any worker may take it. */
  REWIND_STICKY_TIMEOUT_MS: milliseconds("REWIND_STICKY_TIMEOUT_MS", 50, 2_000),
  /** On SIGTERM: how long to let calls in flight finish before handing their runs back. */
  REWIND_SHUTDOWN_GRACE_MS: milliseconds("REWIND_SHUTDOWN_GRACE_MS", 0, 10_000),
  REWIND_MAX_HOT_MB: z.coerce
    .number({ error: "REWIND_MAX_HOT_MB must be a number of MiB" })
    .positive("REWIND_MAX_HOT_MB must be positive")
    .default(1024),
  /** Sandbox processes running this worker's scripts (runs are spread over them). */
  REWIND_SANDBOX_PROCESSES: z.coerce
    .number({ error: "REWIND_SANDBOX_PROCESSES must be a whole number of processes" })
    .int("REWIND_SANDBOX_PROCESSES must be a whole number of processes")
    .min(1, "REWIND_SANDBOX_PROCESSES must be at least 1")
    .max(64, "REWIND_SANDBOX_PROCESSES must be at most 64")
    .default(1),
  /** How much lower the sandbox processes' CPU priority is than the worker's (SANDBOX_NICE). */
  REWIND_SANDBOX_NICE: z.coerce
    .number({ error: "REWIND_SANDBOX_NICE must be a whole number from 0 to 19" })
    .int("REWIND_SANDBOX_NICE must be a whole number from 0 to 19")
    .min(0, "REWIND_SANDBOX_NICE must be at least 0 (the worker's own priority)")
    .max(19, "REWIND_SANDBOX_NICE must be at most 19 (the lowest priority)")
    .optional(),
  /** Serves /healthz, /readyz and /metrics when set (0: any free port). */
  REWIND_HEALTH_PORT: port("REWIND_HEALTH_PORT"),
  REWIND_CHANGE_NOTICES: changeNotices,
  /**
   * Only these epochs (comma-separated), of those this build and runtime can replay: a
   * deployment runs one worker Deployment per epoch, each scaled on its own queue's backlog.
   */
  REWIND_EPOCHS: z
    .string()
    .regex(
      /^\s*\d+(\s*,\s*\d+)*\s*$/,
      "REWIND_EPOCHS must be epoch numbers separated by commas, like 3 or 1,2",
    )
    .transform((list) => list.split(",").map((epoch) => Number(epoch.trim())))
    .optional(),
});

export interface WorkerOptions {
  toolsets: readonly Toolset[];
  concurrency?: number;
  env?: NodeJS.ProcessEnv;
  /** Where the worker's lines go; a line about a run comes with its fields (runFields). */
  log?: (line: string, fields?: object) => void;
}

/**
 * `rewind worker`: a stateless process. It owns the runs it activates through leases (a stale
 * worker's appends are refused), keeps them hot while it can, and can be killed at any moment:
 * another worker takes over from the journal once the lease expires.
 */
export async function startWorker(options: WorkerOptions) {
  const config = parseServiceConfig("rewind worker", Config, options.env ?? process.env);
  const log = options.log ?? (() => {});
  const store = await openStore({
    databaseUrl: config.DATABASE_URL,
    ...(config.REWIND_BLOB_URL ? { blobUrl: config.REWIND_BLOB_URL } : {}),
    codecKeys: config.REWIND_CODEC_KEYS,
  });
  const queue = await BullMqQueue.connect({
    redisUrl: config.REDIS_URL,
    prefix: config.REWIND_REDIS_PREFIX,
    stickyTimeoutMs: config.REWIND_STICKY_TIMEOUT_MS,
  });
  // Scripts run in supervised processes of their own: one that aborts its process (a heap bomb)
  // costs only its own run, charged to it, and never this worker's other runs or its leases.
  const sandbox = new SandboxProcesses({
    processes: config.REWIND_SANDBOX_PROCESSES,
    ...(config.REWIND_SANDBOX_NICE === undefined ? {} : { nice: config.REWIND_SANDBOX_NICE }),
    onExit: (why, runId, lost) =>
      log(
        `${why}${runId === undefined ? "" : `; run ${runId} was executing and is charged a death`}; ` +
          `${lost} run${lost === 1 ? "" : "s"} of it are loaded again in a new one`,
        runId === undefined ? undefined : runFields(runId),
      ),
  });
  sandbox.warm();
  // The epochs this process can replay: one whose V8 or isolated-vm it lacks is refused, saying so.
  const support = epochSupport({
    maxValueBytes: sandbox.options.maxValueBytes,
    ...(config.REWIND_EPOCHS === undefined ? {} : { claims: config.REWIND_EPOCHS }),
  });
  for (const { reason } of support.refused) log(`refusing ${reason}`);
  for (const warning of support.warnings) log(`warning: ${warning}`);
  if (support.epochs.length === 0)
    throw new RewindError(
      "CONFLICT",
      "This worker can replay none of the epochs it was built for (see the lines above): run a build that matches this Node's V8 and isolated-vm",
    );
  // After each group commit, the runs someone waits on are announced to the APIs at once.
  const notices =
    config.REWIND_CHANGE_NOTICES === "off"
      ? undefined
      : RunNoticePublisher.connect({
          redisUrl: config.REDIS_URL,
          prefix: config.REWIND_REDIS_PREFIX,
        });
  serveAs("worker");
  zeroWorkerSeries(options.toolsets);
  const owner = `worker:${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  const executor = new Executor({
    store,
    sandbox,
    toolsets: new Map(options.toolsets.map((t) => [t.name, t] as const)),
    owner,
    epochs: support.epochs,
    leaseTtlMs: config.REWIND_LEASE_MS,
    maxHotBytes: config.REWIND_MAX_HOT_MB * 1024 * 1024,
    onError: activationFailureLog(log),
    onQuarantined: quarantineLog(log),
    ...(notices !== undefined
      ? {
          onCommitted: (runId: string, status: RunStatus) =>
            notices.changed(runId, ENDED_STATUSES.has(status)),
        }
      : {}),
  });
  await publishToolsets(store, options.toolsets, owner); // fork previews name unsafe tools
  // Which epochs have a live worker: runs of the others wait (rewind epochs, the Overview).
  const presence = await announceWorker(store, owner, executor.epochs);
  // Only the queues of the epochs this build can replay: a run of another epoch waits for a
  // worker that can (a gauge shows how many wait).
  // How long each activation waited for a worker, handed from the queue to the activation (and
  // from there to its rw_activations row, for the projections). Observed once the activation
  // has loaded the run: its exemplar then names the run's trace, a start request's included.
  type Wait = { delivery: Delivery; waitedMs: number };
  const observeWait = (runId: string, { delivery, waitedMs }: Wait) =>
    metrics.scheduleToStart.observe({ delivery }, waitedMs / 1000, runId);
  const waited = new Map<string, Wait>();
  queue.consume(
    async (runId, first) => {
      const wait = waited.get(runId);
      waited.delete(runId);
      try {
        return await executor.activate(runId, false, {
          ...(wait === undefined ? {} : { scheduleToStartMs: Math.round(wait.waitedMs) }),
          ...(first === undefined ? {} : { first }),
        });
      } finally {
        if (wait !== undefined) observeWait(runId, wait);
      }
    },
    {
      concurrency: options.concurrency ?? 64,
      epochs: executor.epochs,
      holder: owner,
      claimMs: config.REWIND_LEASE_MS,
      onTaken: (runId, { delivery, waitedMs }) => {
        hop(`worker.taken.${delivery}`, runId);
        if (waited.size < 10_000) waited.set(runId, { delivery, waitedMs });
        else observeWait(runId, { delivery, waitedMs });
      },
    },
  );
  log(
    `taking activations of epoch${executor.epochs.length === 1 ? "" : "s"} ${executor.epochs.join(", ")}`,
  );
  const wake = new WakeUp(store, (route) => queue.ring(route), {
    strandedAfterMs: Math.max(2_000, config.REWIND_LEASE_MS / 2),
  });
  wake.start();
  // Operators' checks of older epochs' runs onto this worker's (rewind epochs migrate): replayed
  // here, on this runtime and its guest, never in the API's process.
  const migrator = new EpochMigrator({
    store,
    sandbox,
    owner,
    epochs: executor.epochs,
    ring: (route) => queue.ring(route),
    leaseTtlMs: config.REWIND_LEASE_MS,
    log,
  });
  migrator.start();
  // The hot-run gauge from the executor itself at each scrape: no path that lets a run go can
  // leave it stale.
  const stopGauge = onScrape(async () => metrics.hotRuns.set(executor.hotRuns));
  let draining = false;
  const health =
    config.REWIND_HEALTH_PORT === undefined
      ? undefined
      : await startHealthServer(config.REWIND_HEALTH_PORT, config.REWIND_HOST, () => ({
          draining,
          hotRuns: executor.hotRuns,
        }));
  if (health) log(`health and metrics on ${health.url}/healthz, ${health.url}/metrics`);
  return {
    owner,
    executor,
    healthUrl: health?.url,
    /**
     * Graceful: take no more activations, let calls in flight finish (up to the grace period),
     * hand every hot run back, ring those with work left so another worker takes them now.
     */
    async close() {
      draining = true;
      stopGauge();
      wake.stop();
      await migrator.stop();
      await presence.stop();
      await queue.stopConsuming();
      const unfinished = await executor.close({ graceMs: config.REWIND_SHUTDOWN_GRACE_MS });
      for (const route of await store.routes(unfinished).catch(() => []))
        await queue.ring(route).catch(() => {});
      if (unfinished.length > 0)
        log(`handed back ${unfinished.length} run(s) with calls in flight; another worker goes on`);
      await queue.close();
      notices?.close();
      sandbox.dispose();
      await store.close();
      await health?.close();
    },
  };
}
