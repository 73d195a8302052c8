import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { CONTENT_TYPES, negotiateFormat, renderMetrics } from "./exposition.js";

export interface ServiceStatus {
  /** Stopping: /readyz answers 503 so no new work is sent here. */
  draining?: boolean;
  /** Anything else worth showing in /healthz (hot runs, …). */
  [detail: string]: unknown;
}

/**
 * A service process's small HTTP server: /healthz (alive), /readyz (taking work) and /metrics
 * for Prometheus. It answers on the process's event loop, so its latency is that loop's: work
 * that held the loop would show here first.
 */
export async function startHealthServer(
  port: number,
  host: string,
  status: () => ServiceStatus = () => ({}),
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    const json = (code: number, body: unknown) => {
      response.writeHead(code, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    if (path === "/healthz") json(200, { ok: true, ...status() });
    else if (path === "/readyz") {
      const draining = status().draining === true;
      json(draining ? 503 : 200, { ok: !draining, ...(draining ? { reason: "draining" } : {}) });
    } else if (path === "/metrics") {
      const format = negotiateFormat(request.headers.accept);
      void renderMetrics(format).then((text) => {
        response.writeHead(200, { "content-type": CONTENT_TYPES[format] });
        response.end(text);
      });
    } else
      json(404, {
        error: { code: "NOT_FOUND", message: `No ${path} here: try /healthz, /readyz or /metrics` },
      });
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
