import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { registry } from "@rewind/telemetry";

/** /healthz and /metrics for the quarantine service's process (Prometheus scrapes the gauge here). */
export async function startMetricsServer(
  port: number,
  host: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    if (path === "/metrics") {
      void registry.metrics().then((text) => {
        response.writeHead(200, { "content-type": registry.contentType });
        response.end(text);
      });
      return;
    }
    const ok = path === "/healthz" || path === "/readyz";
    response.writeHead(ok ? 200 : 404, { "content-type": "application/json" });
    response.end(
      JSON.stringify(
        ok
          ? { ok: true }
          : { error: { code: "NOT_FOUND", message: `No ${path} here: try /healthz or /metrics` } },
      ),
    );
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
