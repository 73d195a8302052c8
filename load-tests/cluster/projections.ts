/**
 * Every projection on, for a benchmark's platform: `rewind projector` exporting spans over OTLP to
 * a real OpenTelemetry Collector (the traces test's, built by scripts/install-tools.mjs) and
 * delivering a webhook for every run event to a receiver here. W1-projections measures its cost;
 * the peers' workload runs beside it with `--projections` (issue 18: figures for the system users
 * get).
 */
import { createServer, type Server } from "node:http";
import { Collector } from "../../services/projector/test/collector.js";
import type { Platform } from "./platform.js";

const CATCH_UP_TIMEOUT_MS = 120_000;

/** The API's environment for a platform that will start projections: its receiver is on loopback. */
export const PROJECTIONS_API_ENV = { REWIND_WEBHOOK_ALLOW: "127.0.0.1" };

/** A webhook endpoint that takes every delivery (204) and counts them. */
async function receiver(): Promise<{ server: Server; url: string; received: () => number }> {
  let received = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      received++;
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${address.port}/hooks`, received: () => received };
}

/** Each sink's lag (seconds) and the webhooks not yet delivered, from the projector's /metrics. */
export async function readLag(
  metricsUrl: string,
): Promise<{ lag: Map<string, number>; pending: number }> {
  const text = await (await fetch(metricsUrl)).text();
  const lag = new Map<string, number>();
  let pending = 0;
  for (const line of text.split("\n")) {
    const sink = /^rewind_projector_lag_seconds\{sink="([^"]+)"\} (\S+)/.exec(line);
    if (sink) lag.set(sink[1]!, Number(sink[2]));
    const waiting = /^rewind_webhook_pending_deliveries(?:\{\})? (\S+)/.exec(line);
    if (waiting) pending = Number(waiting[1]);
  }
  return { lag, pending };
}

/** Waits until every sink and the webhook dispatcher have nothing left (or the time is up). */
export async function caughtUp(metricsUrl: string): Promise<{ done: boolean; ms: number }> {
  const started = Date.now();
  while (Date.now() - started < CATCH_UP_TIMEOUT_MS) {
    const { lag, pending } = await readLag(metricsUrl);
    if (lag.size > 0 && [...lag.values()].every((seconds) => seconds === 0) && pending === 0)
      return { done: true, ms: Date.now() - started };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { done: false, ms: Date.now() - started };
}

export interface Projections {
  /** The projector's /metrics. */
  metricsUrl: string;
  /** Webhook deliveries the receiver took so far. */
  received(): number;
  stop(): Promise<void>;
}

/**
 * Starts a Collector, a webhook receiver subscribed to every event, and `rewind projector`, then
 * waits until the projector has caught up with what the platform already journaled.
 */
export async function startProjections(platform: Platform): Promise<Projections> {
  const collector = new Collector();
  await collector.start();
  const hooks = await receiver();
  let hookId: string | undefined;
  const stop = async () => {
    if (hookId !== undefined) await platform.client.webhooks.remove(hookId).catch(() => {});
    await platform.stopProjector();
    hooks.server.close();
    await collector.stop();
  };
  try {
    hookId = (await platform.client.webhooks.create({ url: hooks.url })).id;
    const { metricsUrl } = await platform.startProjector({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpUrl,
      OTEL_SERVICE_NAME: "rewind-bench",
      ...PROJECTIONS_API_ENV,
    });
    return { metricsUrl, received: hooks.received, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
