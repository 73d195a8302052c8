import { z } from "zod";
import { configError } from "@rewind/core";
import { BullMqQueue } from "@rewind/queue";
import { openStore } from "@rewind/store";
import { createApi } from "./app.js";

const Config = z.object({
  DATABASE_URL: z
    .string()
    .min(
      1,
      "DATABASE_URL is required: the Postgres the workers share (run `rewind migrate` first)",
    ),
  REDIS_URL: z
    .string()
    .min(
      1,
      "REDIS_URL is required: workers take activations from Redis (for one process, use `rewind dev`)",
    ),
  REWIND_REDIS_PREFIX: z.string().default("rewind"),
  REWIND_BLOB_URL: z.string().optional(),
});

/** `rewind api`: the HTTP API as its own process. It stores runs and rings; workers execute. */
export async function startApiService(options: {
  port: number;
  host?: string;
  env?: NodeJS.ProcessEnv;
}) {
  const parsed = Config.safeParse(options.env ?? process.env);
  if (!parsed.success)
    throw configError(
      "rewind api",
      parsed.error.issues.map((i) => i.message),
    );
  const config = parsed.data;
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
