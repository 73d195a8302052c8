import type { FastifyInstance } from "fastify";
import { metrics, registry } from "@rewind/telemetry";

/**
 * GET /metrics in Prometheus's text format (no auth: scrape it on a private network), and the
 * API's own request counts and latencies, labelled by route pattern (never by run id).
 */
export function registerMetrics(app: FastifyInstance): void {
  app.get("/metrics", async (_request, reply) => {
    return reply.type(registry.contentType).send(await registry.metrics());
  });
  app.addHook("onResponse", async (request, reply) => {
    const route = request.routeOptions.url ?? "unknown";
    if (route === "/metrics") return;
    metrics.apiRequests.inc({ route, status: String(reply.statusCode) });
    metrics.apiSeconds.observe({ route }, reply.elapsedTime / 1000);
  });
}
