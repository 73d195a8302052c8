import { startApiService } from "@rewind/api";
import type { Toolset } from "@rewind/sdk";
import { startWorker } from "@rewind/worker";
import { loadToolsets } from "../load-toolset.js";
import { createLogger, lineLog } from "@rewind/telemetry";
import { assertPortFree, parsePort } from "../port.js";

/** Waits for SIGTERM or SIGINT, then closes gracefully. */
function untilStopped(close: () => Promise<void>, log: (line: string) => void): Promise<number> {
  return new Promise((resolve) => {
    const stop = () => {
      log("stopping…");
      void close().then(() => resolve(0));
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}

/** `rewind api`: the HTTP API alone (DATABASE_URL, REDIS_URL); workers execute the runs. */
export async function apiCommand(options: { port?: string }): Promise<number> {
  const host = process.env.REWIND_HOST ?? "127.0.0.1";
  const port = parsePort(options.port);
  await assertPortFree(host, port);
  const log = lineLog(createLogger("api"));
  const service = await startApiService({ port, host });
  log(`API listening on http://${host}:${port}/v1, dashboard on http://${host}:${port}/dashboard/`);
  return untilStopped(() => service.close(), log);
}

/** `rewind worker --toolset FILE… [--concurrency N]`: a stateless executor of runs. */
export async function workerCommand(options: {
  toolset?: string[];
  concurrency?: string;
}): Promise<number> {
  const toolsets: Toolset[] = [];
  for (const file of options.toolset ?? []) toolsets.push(...(await loadToolsets(file)));
  const log = lineLog(createLogger("worker"));
  const worker = await startWorker({
    toolsets,
    concurrency: Number(options.concurrency ?? 64),
    log,
  });
  log(`worker ready: toolsets ${toolsets.map((t) => t.name).join(", ") || "none"}`);
  return untilStopped(() => worker.close(), log);
}
