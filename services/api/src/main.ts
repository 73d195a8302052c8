import { z } from "zod";
import { parseServiceConfig, serviceEnv } from "@rewind/core/service-config";
import { BullMqQueue } from "@rewind/queue";
import { openStore } from "@rewind/store";
import { serveAs } from "@rewind/telemetry";
import { createApi } from "./app.js";

const Config = z.object(serviceEnv);

/** `rewind api`: the HTTP API as its own process. It stores runs and rings; workers execute. */
export async function startApiService(options: {
  port: number;
  host?: string;
  env?: NodeJS.ProcessEnv;
}) {
  const config = parseServiceConfig("rewind api", Config, options.env ?? process.env);
  serveAs("api");
  const store = await openStore({
    databaseUrl: config.DATABASE_URL,
    ...(config.REWIND_BLOB_URL ? { blobUrl: config.REWIND_BLOB_URL } : {}),
  });
  const queue = await BullMqQueue.connect({
    redisUrl: config.REDIS_URL,
    prefix: config.REWIND_REDIS_PREFIX,
  });
  const api = createApi({
    store,
    doorbell: queue,
    version: "0.1.0",
  });
  await api.listen({ port: options.port, host: options.host ?? "127.0.0.1" });
  return {
    api,
    async close() {
      await api.close();
      await queue.close();
      await store.close();
    },
  };
}
