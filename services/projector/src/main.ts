import { z } from "zod";
import { milliseconds, parseServiceConfig, port } from "@rewind/core/service-config";
import { openStore, type Store } from "@rewind/store";
import { metrics, onScrape, serveAs, startHealthServer } from "@rewind/telemetry";
import { OtelSink } from "./otel-sink.js";
import { Projector } from "./projector.js";
import type { Sink } from "./sink.js";

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
});

export interface ProjectorProcessOptions {
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
  /** An open store (`rewind dev` embeds the projector on its own); else DATABASE_URL's. */
  store?: Store;
  /** The sinks; default the traces sink (OTLP, configured by OTEL_*). */
  sinks?: Sink[];
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
  const sinks = options.sinks ?? [new OtelSink({ env })];
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
  serveAs("projector");
  // The lag from the cursors themselves at each scrape: the figure is the store's, not memory's.
  const stopLag = onScrape(async () => {
    const now = Date.now();
    for (const cursor of await store.projectionCursors())
      metrics.projectorLag.set(
        { sink: cursor.sink },
        cursor.oldestPending === undefined
          ? 0
          : Math.max(0, (now - cursor.oldestPending.getTime()) / 1000),
      );
  });
  const health =
    config.REWIND_HEALTH_PORT === undefined
      ? undefined
      : await startHealthServer(config.REWIND_HEALTH_PORT, config.REWIND_HOST, () => ({
          draining: !projector.ready,
          sinks: Object.fromEntries(projector.progress),
        }));
  if (health) log(`health and metrics on ${health.url}/healthz, ${health.url}/metrics`);
  log(`projecting to ${sinks.map((s) => s.name).join(", ")}`);
  return {
    projector,
    healthUrl: health?.url,
    async close() {
      stopLag();
      await projector.stop();
      await health?.close();
      for (const sink of sinks) await sink.close();
      if (options.store === undefined) await store.close();
    },
  };
}
