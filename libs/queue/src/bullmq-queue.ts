import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { RewindError } from "@rewind/core";
import type { ActivationQueue } from "./activation-queue.js";

export interface BullMqOptions {
  redisUrl: string;
  /** Key prefix: tests use their own, so they run in parallel and leave nothing behind. */
  prefix?: string;
  /** Runs of one determinism epoch share a queue; a worker listens to its epochs' queues. */
  epoch?: number;
}

/**
 * Activations on BullMQ. A job's id is the run's id, so rings while a job is waiting collapse
 * into it; jobs are removed when done, so the next ring makes a new one. Redis must keep every
 * key it is given (maxmemory-policy noeviction): an evicted job would be a silently lost ring.
 */
export class BullMqQueue implements ActivationQueue {
  private worker: Worker | undefined;

  private constructor(
    private readonly connection: Redis,
    private readonly queue: Queue,
    private readonly options: Required<Omit<BullMqOptions, "redisUrl">>,
  ) {}

  static async connect(options: BullMqOptions): Promise<BullMqQueue> {
    // maxRetriesPerRequest null: blocking commands wait out a Redis restart instead of failing.
    const connection = new Redis(options.redisUrl, {
      maxRetriesPerRequest: null,
      lazyConnect: true,
    });
    try {
      await connection.connect();
      await checkEvictionPolicy(connection);
    } catch (error) {
      connection.disconnect();
      if (error instanceof RewindError) throw error;
      throw new RewindError(
        "UNAVAILABLE",
        `Could not reach Redis at ${options.redisUrl} (${(error as Error).message}): start it, or unset REDIS_URL to use the in-process queue`,
      );
    }
    const settings = { prefix: options.prefix ?? "rewind", epoch: options.epoch ?? 1 };
    const queue = new Queue(queueName(settings.epoch), { connection, prefix: settings.prefix });
    return new BullMqQueue(connection, queue, settings);
  }

  async ring(runId: string): Promise<void> {
    await this.queue.add(
      "activate",
      { runId },
      { jobId: runId, removeOnComplete: true, removeOnFail: true },
    );
  }

  consume(handler: (runId: string) => Promise<void>, concurrency = 64): void {
    this.worker = new Worker(
      queueName(this.options.epoch),
      async (job) => handler((job.data as { runId: string }).runId),
      { connection: this.connection.duplicate(), prefix: this.options.prefix, concurrency },
    );
    this.worker.on("error", () => {}); // connection trouble: BullMQ reconnects by itself
  }

  async close(): Promise<void> {
    await this.worker?.close();
    await this.queue.close();
    this.connection.disconnect();
  }
}

function queueName(epoch: number): string {
  return `activations-epoch-${epoch}`;
}

/** Refuses a Redis that may evict keys: a lost job is a lost ring, silently. */
export async function checkEvictionPolicy(redis: Redis): Promise<void> {
  const reply = (await redis.config("GET", "maxmemory-policy")) as string[];
  const policy = reply[1];
  if (policy !== undefined && policy !== "noeviction") {
    throw new RewindError(
      "CONFLICT",
      `Redis runs with maxmemory-policy ${policy}, which may evict Rewind's activations. ` +
        `Set it to noeviction (CONFIG SET maxmemory-policy noeviction, and in redis.conf) and start again`,
    );
  }
}
