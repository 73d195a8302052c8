import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { z } from "zod";
import { configError } from "@rewind/core";
import { Executor, WakeUp } from "@rewind/executor";
import { BullMqQueue } from "@rewind/queue";
import { Sandbox } from "@rewind/sandbox";
import type { Toolset } from "@rewind/sdk";
import { openStore } from "@rewind/store";

const Config = z.object({
  DATABASE_URL: z
    .string()
    .min(
      1,
      "DATABASE_URL is required: the Postgres holding the journal (run `rewind migrate` first)",
    ),
  REDIS_URL: z.string().min(1, "REDIS_URL is required: where activations are queued"),
  REWIND_REDIS_PREFIX: z.string().default("rewind"),
  REWIND_BLOB_URL: z.string().optional(),
});

export interface WorkerOptions {
  toolsets: readonly Toolset[];
  concurrency?: number;
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

/**
 * `rewind worker`: a stateless process. It owns the runs it activates through leases (a stale
 * worker's appends are refused), keeps them hot while it can, and can be killed at any moment:
 * another worker takes over from the journal once the lease expires.
 */
export async function startWorker(options: WorkerOptions) {
  const parsed = Config.safeParse(options.env ?? process.env);
  if (!parsed.success)
    throw configError(
      "rewind worker",
      parsed.error.issues.map((i) => i.message),
    );
  const config = parsed.data;
  const log = options.log ?? (() => {});
  const store = await openStore({
    databaseUrl: config.DATABASE_URL,
    ...(config.REWIND_BLOB_URL ? { blobUrl: config.REWIND_BLOB_URL } : {}),
  });
  const queue = await BullMqQueue.connect({
    redisUrl: config.REDIS_URL,
    prefix: config.REWIND_REDIS_PREFIX,
  });
  const sandbox = new Sandbox({ mode: "async" });
  const executor = new Executor({
    store,
    sandbox,
    toolsets: new Map(options.toolsets.map((t) => [t.name, t] as const)),
    owner: `worker:${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`,
    onError: (runId, error) =>
      log(`run ${runId}: activation failed, retrying: ${(error as Error).message}`),
  });
  queue.consume((runId) => executor.activate(runId), options.concurrency ?? 64);
  const wake = new WakeUp(store, (runId) => queue.ring(runId));
  await wake.recover();
  wake.start();
  return {
    executor,
    /** Graceful: stop taking activations, hand hot runs back (their leases), then leave. */
    async close() {
      wake.stop();
      await queue.close();
      await executor.close();
      sandbox.dispose();
      await store.close();
    },
  };
}
