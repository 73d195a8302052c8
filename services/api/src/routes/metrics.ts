import type { FastifyInstance } from "fastify";
import { CONTENT_TYPES, metrics, negotiateFormat, renderMetrics } from "@rewind/telemetry";

/**
 * GET /metrics (no auth: scrape it on a private network), in OpenMetrics to a scraper that asks
 * for it (exemplars), Prometheus's classic text otherwise. And the API's own request counts and
 * latencies, labelled by route pattern (never by run id), and the runs it stored.
 */
export function registerMetrics(app: FastifyInstance): void {
  // At 0 from the start: a series first seen above 0 loses that much in Prometheus's increase().
  for (const how of ["start", "fork"]) metrics.runsStarted.inc({ how }, 0);
  app.get("/metrics", async (request, reply) => {
    const format = negotiateFormat(request.headers.accept);
    return reply.type(CONTENT_TYPES[format]).send(await renderMetrics(format));
  });
  app.addHook("onResponse", async (request, reply) => {
    const route = request.routeOptions.url ?? "unknown";
    if (route === "/metrics") return;
    metrics.apiRequests.inc({ route, status: String(reply.statusCode) });
    metrics.apiSeconds.observe({ route }, reply.elapsedTime / 1000);
    // 201 is a run stored; a repeated start or fork answers with the run it already made.
    if (request.method === "POST" && reply.statusCode === 201) {
      if (route === "/v1/runs") metrics.runsStarted.inc({ how: "start" });
      else if (route === "/v1/runs/:id/fork") metrics.runsStarted.inc({ how: "fork" });
    }
  });
}
