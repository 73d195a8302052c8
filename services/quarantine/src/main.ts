import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { z } from "zod";
import { configError } from "@rewind/core";
import { BullMqQueue } from "@rewind/queue";
import { openStore } from "@rewind/store";
import { startHealthServer } from "@rewind/telemetry";
import { QuarantineService } from "./quarantine-service.js";

const Config = z.object({
  DATABASE_URL: z
    .string()
    .min(
      1,
      "DATABASE_URL is required: the Postgres holding the journal (run `rewind migrate` first)",
    ),
  REDIS_URL: z
    .string()
    .min(1, "REDIS_URL is required: released runs are rung on their epoch's queue"),
  REWIND_REDIS_PREFIX: z.string().default("rewind"),
  REWIND_BLOB_URL: z.string().optional(),
  /** How often operators' requests are looked for. */
  REWIND_QUARANTINE_POLL_MS: z.coerce
    .number({ error: "REWIND_QUARANTINE_POLL_MS must be a number of milliseconds" })
    .int("REWIND_QUARANTINE_POLL_MS must be a whole number of milliseconds")
    .min(50, "REWIND_QUARANTINE_POLL_MS must be at least 50 ms")
    .default(1_000),
  /** Serves /healthz and /metrics when set (0: any free port). */
  REWIND_HEALTH_PORT: z.coerce
    .number({ error: "REWIND_HEALTH_PORT must be a port number" })
    .int()
    .min(0)
    .max(65535, "REWIND_HEALTH_PORT must be a port number (0 to 65535)")
    .optional(),
  REWIND_HOST: z.string().default("127.0.0.1"),
});

export interface QuarantineServiceProcessOptions {
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

/**
 * `rewind quarantine-service`: a stateless process that acts on operators' release and give-up
 * requests for quarantined runs (only it appends run.released, and run.failed for a give-up),
 * and keeps the gauge of quarantined runs by epoch and reason. Crash-only, like every service:
 * requests are consumed by the commit that acts on them. One or several may run.
 */
export async function startQuarantineService(options: QuarantineServiceProcessOptions = {}) {
  const parsed = Config.safeParse(options.env ?? process.env);
  if (!parsed.success)
    throw configError(
      "rewind quarantine-service",
      parsed.error.issues.map((i) => i.message),
    );
  const config = parsed.data;
  const log = options.log ?? (() => {});
  const store = await openStore({
    databaseUrl: config.DATABASE_URL,
    ...(config.REWIND_BLOB_URL ? { blobUrl: config.REWIND_BLOB_URL } : {}),
  });
  let queue: BullMqQueue;
  try {
    queue = await BullMqQueue.connect({
      redisUrl: config.REDIS_URL,
      prefix: config.REWIND_REDIS_PREFIX,
    });
  } catch (error) {
    await store.close();
    throw error;
  }
  const owner = `quarantine:${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  const service = new QuarantineService({
    store,
    doorbell: queue,
    owner,
    pollMs: config.REWIND_QUARANTINE_POLL_MS,
    log,
  });
  service.start();
  const health =
    config.REWIND_HEALTH_PORT === undefined
      ? undefined
      : await startHealthServer(config.REWIND_HEALTH_PORT, config.REWIND_HOST);
  if (health) log(`health and metrics on ${health.url}/healthz, ${health.url}/metrics`);
  return {
    owner,
    service,
    healthUrl: health?.url,
    async close() {
      await service.stop();
      await queue.close();
      await store.close();
      await health?.close();
    },
  };
}
