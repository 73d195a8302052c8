import { z } from "zod";
import { limitsEnforcedAt } from "@rewind/core";
import { changeNotices, parseServiceConfig, serviceEnv } from "@rewind/core/service-config";
import { BullMqQueue } from "@rewind/queue";
import { openStore } from "@rewind/store";
import { metrics, serveAs } from "@rewind/telemetry";
import { createApi } from "./app.js";
import { newRunEpochSetting } from "./new-run-epoch.js";
import { RedisRunChanges } from "./redis-run-changes.js";

const Config = z.object({
  ...serviceEnv,
  REWIND_CHANGE_NOTICES: changeNotices,
  /**
   * How often a waiting request (a result, a journal stream) reads the store when no notice
   * comes: what a lost notice costs at most. Default 1 s with notices, 100 ms without.
   */
  REWIND_POLL_MS: z.coerce
    .number({ error: "REWIND_POLL_MS must be a number of milliseconds" })
    .int("REWIND_POLL_MS must be a whole number of milliseconds")
    .min(10, "REWIND_POLL_MS must be at least 10 ms")
    .optional(),
  REWIND_NEW_RUN_EPOCH: newRunEpochSetting,
});

/** `rewind api`: the HTTP API as its own process. It stores runs and rings; workers execute. */
export async function startApiService(options: {
  port: number;
  host?: string;
  env?: NodeJS.ProcessEnv;
}) {
  const config = parseServiceConfig("rewind api", Config, options.env ?? process.env);
  serveAs("api");
  // The limits this process enforces, each a series at 0 from the start: Prometheus's increase()
  // would miss a first refusal that made the series appear at 1.
  for (const limit of limitsEnforcedAt("start")) metrics.limitsExceeded.inc({ limit }, 0);
  const store = await openStore({
    databaseUrl: config.DATABASE_URL,
    ...(config.REWIND_BLOB_URL ? { blobUrl: config.REWIND_BLOB_URL } : {}),
    codecKeys: config.REWIND_CODEC_KEYS,
  });
  const queue = await BullMqQueue.connect({
    redisUrl: config.REDIS_URL,
    prefix: config.REWIND_REDIS_PREFIX,
  });
  const changes =
    config.REWIND_CHANGE_NOTICES === "off"
      ? undefined
      : await RedisRunChanges.connect({
          redisUrl: config.REDIS_URL,
          prefix: config.REWIND_REDIS_PREFIX,
        });
  const api = createApi({
    store,
    doorbell: queue,
    version: "0.1.0",
    ...(changes !== undefined ? { changes } : {}),
    ...(config.REWIND_POLL_MS !== undefined ? { pollMs: config.REWIND_POLL_MS } : {}),
    ...(config.REWIND_NEW_RUN_EPOCH !== undefined ? { epoch: config.REWIND_NEW_RUN_EPOCH } : {}),
  });
  await api.listen({ port: options.port, host: options.host ?? "127.0.0.1" });
  return {
    api,
    async close() {
      await api.close();
      changes?.close();
      await queue.close();
      await store.close();
    },
  };
}
