import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { z } from "zod";
import {
  changeNotices,
  milliseconds,
  parseServiceConfig,
  port,
  serviceEnv,
} from "@rewind/core/service-config";
import { BullMqQueue, RunNoticePublisher } from "@rewind/queue";
import { openStore } from "@rewind/store";
import { EPOCHS } from "@rewind/sandbox";
import { metrics, onScrape, serveAs, startHealthServer } from "@rewind/telemetry";
import { serveBacklog } from "./backlog-gauge.js";
import { QuarantineService } from "./quarantine-service.js";

const Config = z.object({
  ...serviceEnv,
  /** How often operators' requests are looked for. */
  REWIND_QUARANTINE_POLL_MS: milliseconds("REWIND_QUARANTINE_POLL_MS", 50, 1_000),
  /** Serves /healthz and /metrics when set (0: any free port). */
  REWIND_HEALTH_PORT: port("REWIND_HEALTH_PORT"),
  REWIND_CHANGE_NOTICES: changeNotices,
});

export interface QuarantineServiceProcessOptions {
  env?: NodeJS.ProcessEnv;
  /** Where its lines go; a line about a run comes with its fields (runFields). */
  log?: (line: string, fields?: object) => void;
}

/**
 * `rewind quarantine-service`: a stateless process that acts on operators' release and give-up
 * requests for quarantined runs (only it appends run.released, and run.failed for a give-up),
 * and keeps the gauges of quarantined runs by epoch and reason and of the queue backlog by epoch. Crash-only, like every service:
 * requests are consumed by the commit that acts on them. One or several may run.
 */
export async function startQuarantineService(options: QuarantineServiceProcessOptions = {}) {
  const config = parseServiceConfig(
    "rewind quarantine-service",
    Config,
    options.env ?? process.env,
  );
  const log = options.log ?? (() => {});
  const store = await openStore({
    databaseUrl: config.DATABASE_URL,
    ...(config.REWIND_BLOB_URL ? { blobUrl: config.REWIND_BLOB_URL } : {}),
    codecKeys: config.REWIND_CODEC_KEYS,
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
  // Its commits (a release, a give-up) are announced like a worker's: a client waiting on the
  // run hears of them at once, not on the API's backstop poll.
  const notices =
    config.REWIND_CHANGE_NOTICES === "off"
      ? undefined
      : RunNoticePublisher.connect({
          redisUrl: config.REDIS_URL,
          prefix: config.REWIND_REDIS_PREFIX,
        });
  const owner = `quarantine:${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  const service = new QuarantineService({
    store,
    doorbell: queue,
    owner,
    pollMs: config.REWIND_QUARANTINE_POLL_MS,
    log,
    ...(notices === undefined
      ? {}
      : { onCommitted: (runId: string, ended: boolean) => notices.changed(runId, ended) }),
  });
  service.start();
  serveAs("quarantine");
  const stopBacklog = serveBacklog(queue);
  // The quarantine's gauges too are read at each scrape (not only every 15 s), and the counters
  // of releases start at 0 for every epoch (a series first seen above 0 loses that much in
  // Prometheus's increase()).
  const stopGauges = onScrape(() => service.refreshGauge());
  for (const { epoch } of EPOCHS) metrics.quarantineReleases.inc({ epoch: String(epoch) }, 0);
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
      stopBacklog();
      stopGauges();
      await service.stop();
      notices?.close();
      await queue.close();
      await store.close();
      await health?.close();
    },
  };
}
