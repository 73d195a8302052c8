import { RewindError, parseDuration } from "@rewind/core";
import { OtelSink, WebhookSink, backfill, startProjectorService } from "@rewind/projector";
import { openStore } from "@rewind/store";
import { createLogger, lineLog } from "@rewind/telemetry";

/**
 * `rewind projector`: follows committed journal entries and delivers them to each sink (traces
 * over OTLP, configured by OTEL_*) from its durable cursor (DATABASE_URL; REWIND_PROJECTOR_POLL_MS,
 * REWIND_HEALTH_PORT). Stops on SIGTERM or SIGINT.
 */
export async function projectorCommand(): Promise<number> {
  const log = lineLog(createLogger("projector"));
  const service = await startProjectorService({ log });
  log(
    `projector ready${service.healthUrl === undefined ? "" : ` (metrics on ${service.healthUrl}/metrics)`}`,
  );
  return new Promise((resolve) => {
    const stop = () => {
      log("stopping…");
      void service.close().then(() => resolve(0));
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}

async function withStore<T>(body: (store: Awaited<ReturnType<typeof openStore>>) => Promise<T>) {
  const url = process.env.DATABASE_URL;
  const store = await openStore(url === undefined ? {} : { databaseUrl: url });
  try {
    return await body(store);
  } finally {
    await store.close();
  }
}

/** `rewind projections [--json]`: each sink's cursor and lag. */
export async function projectionsCommand(options: { json?: boolean } = {}): Promise<number> {
  return withStore(async (store) => {
    const cursors = await store.projectionCursors();
    const now = Date.now();
    const rows = cursors.map((c) => ({
      sink: c.sink,
      delivered: c.delivered,
      pendingEntries: c.pendingRows,
      lagSeconds:
        c.oldestPending === undefined ? 0 : Math.max(0, (now - c.oldestPending.getTime()) / 1000),
      cursor: c.below.toString(),
      updatedAt: c.updatedAt.toISOString(),
    }));
    if (options.json === true) {
      process.stdout.write(`${JSON.stringify({ sinks: rows })}\n`);
      return 0;
    }
    if (rows.length === 0) {
      process.stdout.write("no sink has run yet: start `rewind projector` (or `rewind dev`)\n");
      return 0;
    }
    process.stdout.write("SINK     DELIVERED  PENDING  LAG       UPDATED\n");
    for (const r of rows)
      process.stdout.write(
        `${r.sink.padEnd(8)} ${String(r.delivered).padStart(9)}  ${String(r.pendingEntries).padStart(7)}  ${`${r.lagSeconds.toFixed(1)}s`.padEnd(8)}  ${r.updatedAt}\n`,
      );
    return 0;
  });
}

/**
 * `rewind projections backfill --sink otel|webhooks (--run R… | --since 7d)`: re-runs a sink.
 * For webhooks it makes the deliveries an event lacks (for endpoints that existed then); those an
 * event has are kept, not sent again (`rewind webhooks redeliver` does that).
 */
export async function backfillCommand(options: {
  sink: string;
  run?: string[];
  since?: string;
}): Promise<number> {
  if (options.sink !== "otel" && options.sink !== "webhooks")
    throw new RewindError(
      "INVALID_INPUT",
      `No sink named ${JSON.stringify(options.sink)}: the sinks are otel and webhooks`,
    );
  if ((options.run === undefined) === (options.since === undefined))
    throw new RewindError(
      "INVALID_INPUT",
      "Say what to backfill: --run <run>… or --since <duration> (e.g. --since 7d), not both",
    );
  const selection =
    options.run !== undefined
      ? { runIds: options.run }
      : { since: new Date(Date.now() - parseDuration(options.since!)) };
  if (options.sink === "webhooks") {
    const publicUrl =
      process.env.REWIND_PUBLIC_URL ?? process.env.REWIND_URL ?? "http://localhost:7420";
    const result = await withStore((store) =>
      backfill(store, new WebhookSink(store, publicUrl), selection),
    );
    process.stdout.write(`backfilled ${result.runs} runs: ${result.delivered} deliveries made\n`);
    return 0;
  }
  const sink = new OtelSink();
  try {
    const result = await withStore((store) => backfill(store, sink, selection));
    process.stdout.write(`backfilled ${result.runs} runs: ${result.delivered} spans sent\n`);
    return 0;
  } finally {
    await sink.close();
  }
}
