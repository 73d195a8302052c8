import { z } from "zod";
import { parseDuration } from "@rewind/core/duration";
import { addressPolicy } from "@rewind/core/outbound-address";
import { milliseconds, parseServiceConfig, port } from "@rewind/core/service-config";
import { openStore, type Store } from "@rewind/store";
import { metrics, onScrape, serveAs, startHealthServer } from "@rewind/telemetry";
import { OtelSink } from "./otel-sink.js";
import { Projector } from "./projector.js";
import type { Sink } from "./sink.js";
import { Dispatcher } from "./webhooks/dispatcher.js";
import { WebhookSink } from "./webhooks/sink.js";

const duration = (name: string, fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((value, ctx) => {
      try {
        return parseDuration(value, name);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message });
        return z.NEVER;
      }
    });

const Config = z.object({
  DATABASE_URL: z
    .string({ error: "DATABASE_URL is required: the Postgres holding the journal" })
    .min(1, "DATABASE_URL is required: the Postgres holding the journal"),
  REWIND_BLOB_URL: z.string().optional(),
  REWIND_HOST: z.string().default("127.0.0.1"),
  /** How often committed entries are looked for when every sink is caught up. */
  REWIND_PROJECTOR_POLL_MS: milliseconds("REWIND_PROJECTOR_POLL_MS", 10, 200),
  /** Serves /healthz, /readyz and /metrics when set (0: any free port). */
  REWIND_HEALTH_PORT: port("REWIND_HEALTH_PORT"),
  // ---- webhooks (docs/webhooks.md)
  REWIND_WEBHOOKS: z
    .enum(["on", "off"], { error: "REWIND_WEBHOOKS must be on or off" })
    .default("on"),
  /** Where a payload's links point: the API as clients reach it. */
  REWIND_PUBLIC_URL: z.string().optional(),
  REWIND_URL: z.string().default("http://localhost:7420"),
  /** CIDRs, addresses and host names webhooks may reach though private or loopback. */
  REWIND_WEBHOOK_ALLOW: z.string().optional(),
  REWIND_WEBHOOK_TIMEOUT_MS: milliseconds("REWIND_WEBHOOK_TIMEOUT_MS", 100, 15_000),
  REWIND_WEBHOOK_RETRY_MS: milliseconds("REWIND_WEBHOOK_RETRY_MS", 10, 5_000),
  REWIND_WEBHOOK_RETRY_MAX_MS: milliseconds("REWIND_WEBHOOK_RETRY_MAX_MS", 10, 6 * 3_600_000),
  REWIND_WEBHOOK_ATTEMPTS: z.coerce
    .number({ error: "REWIND_WEBHOOK_ATTEMPTS must be a number" })
    .int("REWIND_WEBHOOK_ATTEMPTS must be a whole number")
    .min(1, "REWIND_WEBHOOK_ATTEMPTS must be at least 1")
    .default(15),
  REWIND_WEBHOOK_DISABLE_AFTER: duration("REWIND_WEBHOOK_DISABLE_AFTER", "5d"),
  /** How long finished deliveries stay in the delivery log. */
  REWIND_WEBHOOK_LOG_RETENTION: duration("REWIND_WEBHOOK_LOG_RETENTION", "30d"),
  REWIND_WEBHOOK_CONCURRENCY: z.coerce
    .number({ error: "REWIND_WEBHOOK_CONCURRENCY must be a number" })
    .int()
    .min(1, "REWIND_WEBHOOK_CONCURRENCY must be at least 1")
    .default(16),
});

export interface ProjectorProcessOptions {
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
  /** An open store (`rewind dev` embeds the projector on its own); else DATABASE_URL's. */
  store?: Store;
  /** The sinks; default the traces sink (OTLP, configured by OTEL_*) and the webhook sink. */
  sinks?: Sink[];
  /** Whether the default sinks include traces (default true; `rewind dev` without OTLP: false). */
  traces?: boolean;
}

/**
 * `rewind projector`: follows committed journal entries and delivers them to each sink from its
 * own durable cursor (docs/traces.md). Stateless and crash-only: a kill -9 sends the window in
 * flight again. Several may run (each window at least once; a cursor never moves back).
 */
export async function startProjectorService(options: ProjectorProcessOptions = {}) {
  const env = options.env ?? process.env;
  const config = parseServiceConfig(
    "rewind projector",
    options.store === undefined ? Config : Config.extend({ DATABASE_URL: z.string().optional() }),
    env,
  );
  const log = options.log ?? (() => {});
  const store =
    options.store ??
    (await openStore({
      databaseUrl: config.DATABASE_URL,
      ...(config.REWIND_BLOB_URL ? { blobUrl: config.REWIND_BLOB_URL } : {}),
    }));
  const webhooks = config.REWIND_WEBHOOKS === "on";
  const policy = addressPolicy(config.REWIND_WEBHOOK_ALLOW);
  const sinks = options.sinks ?? [
    ...(options.traces === false ? [] : [new OtelSink({ env })]),
    ...(webhooks ? [new WebhookSink(store, config.REWIND_PUBLIC_URL ?? config.REWIND_URL)] : []),
  ];
  const dispatcher = webhooks
    ? new Dispatcher({
        store,
        policy,
        pollMs: config.REWIND_PROJECTOR_POLL_MS,
        concurrency: config.REWIND_WEBHOOK_CONCURRENCY,
        timeoutMs: config.REWIND_WEBHOOK_TIMEOUT_MS,
        maxResponseBytes: 64 * 1024,
        retryMs: config.REWIND_WEBHOOK_RETRY_MS,
        retryMaxMs: config.REWIND_WEBHOOK_RETRY_MAX_MS,
        attempts: config.REWIND_WEBHOOK_ATTEMPTS,
        disableAfterMs: config.REWIND_WEBHOOK_DISABLE_AFTER,
        keepLogMs: config.REWIND_WEBHOOK_LOG_RETENTION,
        log,
      })
    : undefined;
  const projector = new Projector({
    store,
    sinks,
    pollMs: config.REWIND_PROJECTOR_POLL_MS,
    log,
    onDelivered: (sink, count) => metrics.projectorDelivered.inc({ sink }, count),
    onFailed: (sink) => metrics.projectorFailures.inc({ sink }),
  });
  for (const sink of sinks) {
    metrics.projectorDelivered.inc({ sink: sink.name }, 0);
    metrics.projectorFailures.inc({ sink: sink.name }, 0);
  }
  projector.start();
  dispatcher?.start();
  if (dispatcher !== undefined)
    for (const outcome of ["delivered", "retrying", "failed"])
      metrics.webhookDeliveries.inc({ outcome }, 0);
  // Its own process is the projector: /metrics lists the projector's metrics. Embedded (`rewind
  // dev` hands it its store), the process is every service, and serves every metric: declaring
  // it the projector there hid the API's and the executor's (issue 17's limit hits among them).
  if (options.store === undefined) serveAs("projector");
  // The lag from the cursors themselves at each scrape: the figure is the store's, not memory's.
  // One index probe a sink (projectionLags), never a read of the backlog: a scrape must cost the
  // database nothing that grows with the journal.
  const stopLag = onScrape(async () => {
    const now = Date.now();
    for (const cursor of await store.projectionLags())
      metrics.projectorLag.set(
        { sink: cursor.sink },
        cursor.oldestPending === undefined
          ? 0
          : Math.max(0, (now - cursor.oldestPending.getTime()) / 1000),
      );
    if (dispatcher !== undefined)
      metrics.webhookPending.set({}, await store.webhooks.pendingCount());
  });
  const health =
    config.REWIND_HEALTH_PORT === undefined
      ? undefined
      : await startHealthServer(config.REWIND_HEALTH_PORT, config.REWIND_HOST, () => ({
          draining: !projector.ready,
          sinks: Object.fromEntries(projector.progress),
        }));
  if (health) log(`health and metrics on ${health.url}/healthz, ${health.url}/metrics`);
  log(
    `projecting to ${sinks.map((s) => s.name).join(", ")}${dispatcher ? "; sending webhooks" : ""}`,
  );
  return {
    projector,
    healthUrl: health?.url,
    async close() {
      stopLag();
      await projector.stop();
      await dispatcher?.stop();
      await health?.close();
      for (const sink of sinks) await sink.close();
      if (options.store === undefined) await store.close();
    },
  };
}
