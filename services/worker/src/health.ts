import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { registry } from "@rewind/telemetry";

/**
 * The worker's own small HTTP server: liveness for the orchestrator and metrics for Prometheus.
 * It answers on the same event loop that renews BullMQ locks, so its latency is that loop's: a
 * script that blocked the loop would show here first.
 */
export async function startHealthServer(
  port: number,
  host: string,
  status: () => { draining: boolean; hotRuns: number },
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    if (path === "/healthz") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ ok: true, ...status() }));
    } else if (path === "/readyz") {
      const { draining } = status();
      response.writeHead(draining ? 503 : 200, { "content-type": "application/json" });
      response.end(JSON.stringify({ ok: !draining, ...(draining ? { reason: "draining" } : {}) }));
    } else if (path === "/metrics") {
      void registry.metrics().then((text) => {
        response.writeHead(200, { "content-type": registry.contentType });
        response.end(text);
      });
    } else {
      response.writeHead(404, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          error: {
            code: "NOT_FOUND",
            message: `No ${path} here: try /healthz, /readyz or /metrics`,
          },
        }),
      );
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host}:${address.port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
