import type { FastifyInstance } from "fastify";
import { CONTENT_TYPES, metrics, negotiateFormat, renderMetrics } from "@rewind/telemetry";
import { defineRoute } from "../route.js";

/**
 * GET /metrics, for a scraper with a token of the `metrics` scope (the API's port is the one
 * exposed to tenants; metrics count every namespace's runs, so no tenant token sees them). In
 * OpenMetrics to a scraper that asks for it (exemplars), Prometheus's classic text otherwise.
 * Workers and the quarantine service serve theirs on a health port of their own, which is not
 * exposed (docs/tokens.md).
 */
export const scrapeMetrics = defineRoute({
  method: "GET",
  path: "/metrics",
  operationId: "scrapeMetrics",
  summary: "Prometheus metrics of this API process (needs the metrics scope)",
  access: "metrics",
  responses: {
    200: {
      description: "The metrics, in Prometheus text or OpenMetrics",
      contentType: "text/plain",
    },
  },
  errors: [401, 403, 503],
  async handle({ request, reply }) {
    const format = negotiateFormat(request.headers.accept);
    return reply.type(CONTENT_TYPES[format]).send(await renderMetrics(format));
  },
});

/**
 * The API's own request counts and latencies, labelled by route pattern (never by run id), and
 * the runs it stored.
 */
export function registerMetrics(app: FastifyInstance): void {
  // At 0 from the start: a series first seen above 0 loses that much in Prometheus's increase().
  for (const how of ["start", "fork"]) metrics.runsStarted.inc({ how }, 0);
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
