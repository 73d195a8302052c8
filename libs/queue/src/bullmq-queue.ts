import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { RewindError, type FirstActivation } from "@rewind/core";
import type {
  Activation,
  ActivationHandler,
  ActivationQueue,
  ConsumeOptions,
} from "./activation-queue.js";

export interface BullMqOptions {
  redisUrl: string;
  /** Key prefix: tests use their own, so they run in parallel and leave nothing behind. */
  prefix?: string;
  /**
   * How long a hot run's activation waits for the worker holding it before any worker of its
   * epoch may take it (and replay it cold). Default 2 s.
   */
  stickyTimeoutMs?: number;
}

/**
 * Activations on BullMQ: one queue per determinism epoch, plus sticky delivery to the worker that
 * holds a run hot.
 *
 * A job's id is the run's id, so rings while a job is waiting collapse into it; jobs are removed
 * when done, so the next ring makes a new one. Redis must keep every key it is given
 * (maxmemory-policy noeviction): an evicted job would be a silently lost ring.
 *
 * Sticky delivery is a Redis channel per worker, not a queue: PUBLISH says at once whether the
 * holder is still listening (a dead worker's queue would keep its jobs forever, waiting for no
 * one). Because a message can be lost (the holder stalls, Redis restarts), each sticky ring also
 * leaves a delayed job on the epoch's queue; the holder cancels it when it takes the message, and
 * otherwise any worker takes it after `stickyTimeoutMs`. A duplicate activation is harmless: the
 * run's lease lets only its owner append.
 */
export class BullMqQueue implements ActivationQueue {
  private readonly queues = new Map<number, Queue>();
  private readonly workers: Worker[] = [];
  private readonly connections: Redis[] = [];
  private subscriber: Redis | undefined;

  private constructor(
    private readonly connection: Redis,
    private readonly prefix: string,
    private readonly stickyTimeoutMs: number,
  ) {}

  static async connect(options: BullMqOptions): Promise<BullMqQueue> {
    // maxRetriesPerRequest null: blocking commands wait out a Redis restart instead of failing.
    const connection = new Redis(options.redisUrl, {
      maxRetriesPerRequest: null,
      lazyConnect: true,
    });
    // Without a listener, ioredis prints "Unhandled error event" for each failed reconnect while
    // Redis restarts (the test run showed them): it reconnects by itself, and a failed connect at
    // start-up is thrown below.
    connection.on("error", () => {});
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
    return new BullMqQueue(
      connection,
      options.prefix ?? "rewind",
      options.stickyTimeoutMs ?? 2_000,
    );
  }

  async ring({ runId, epoch, holder, leases, first }: Activation): Promise<void> {
    const queue = this.queue(epoch);
    const once = { removeOnComplete: true, removeOnFail: true };
    // Duplicate rings share a job id and collapse. The id names the lease generation: a worker
    // killed mid-activation leaves its job active (locked) until BullMQ finds it stalled, and a
    // ring of the next generation must not wait behind it.
    const jobId = leases === undefined ? runId : `${runId}.${leases}`;
    if (holder !== undefined) {
      const fallback = fallbackId(jobId);
      await queue.add(
        "activate",
        { runId },
        { ...once, jobId: fallback, delay: this.stickyTimeoutMs },
      );
      const message = JSON.stringify({ runId, fallback, at: Date.now() } satisfies StickyMessage);
      if ((await this.connection.publish(this.channel(holder), message)) > 0) return;
      await queue.remove(fallback); // no one listens there: the holder is gone
    }
    const data: ActivationData = first === undefined ? { runId } : { runId, first };
    await queue.add("activate", data, { ...once, jobId });
  }

  consume(handler: ActivationHandler, options: ConsumeOptions = {}): void {
    for (const epoch of options.epochs ?? [1]) {
      this.queue(epoch); // to cancel sticky fallbacks on it
      // BullMQ leaves a connection it is given open on close: keep it to close it ourselves.
      const connection = this.connection.duplicate();
      this.connections.push(connection);
      const worker = new Worker(
        queueName(epoch),
        async (job) => {
          const { runId, first } = job.data as ActivationData;
          const due = job.timestamp + (job.opts.delay ?? 0);
          options.onTaken?.(runId, { delivery: "shared", waitedMs: Math.max(0, Date.now() - due) });
          return handler(runId, first);
        },
        {
          connection,
          prefix: this.prefix,
          concurrency: options.concurrency ?? 64,
          // A killed worker's job stays locked for lockDuration, and only a stalled-job check
          // (every stalledInterval, by any live worker) gives it back: both follow the lease.
          lockDuration: options.claimMs ?? 30_000,
          stalledInterval: options.claimMs ?? 30_000,
        },
      );
      worker.on("error", () => {}); // connection trouble: BullMQ reconnects by itself
      this.workers.push(worker);
    }
    if (options.holder === undefined) return;
    this.subscriber = this.connection.duplicate();
    this.subscriber.on("error", () => {}); // reconnects by itself; fallbacks cover lost messages
    void this.subscriber.subscribe(this.channel(options.holder)).catch(() => {});
    this.subscriber.on("message", (_channel: string, text: string) => {
      const { runId, fallback, at } = JSON.parse(text) as StickyMessage;
      options.onTaken?.(runId, { delivery: "sticky", waitedMs: Math.max(0, Date.now() - at) });
      // Taken here: the fallback is not needed (if it already started elsewhere, the lease decides).
      for (const queue of this.queues.values()) void queue.remove(fallback).catch(() => {});
      void handler(runId).catch(() => {});
    });
  }

  /**
   * Activations waiting for a worker, per epoch: waiting + prioritized + delayed ones already due.
   * This is what an autoscaler needs (KEDA's Redis-list scaler reads one list and misses the
   * other two). A delayed job that is due stays in BullMQ's delayed set until some worker of its
   * queue promotes it, so with no worker running it is counted here or nowhere; sticky fallbacks
   * not yet due are not backlog (their holder is expected to take the run first).
   */
  async backlog(epochs: readonly number[]): Promise<Map<number, number>> {
    const now = Date.now();
    const counts = await Promise.all(
      epochs.map(async (epoch) => {
        const queue = this.queue(epoch);
        const [waiting, prioritized, due] = await Promise.all([
          queue.getWaitingCount(),
          queue.getPrioritizedCount(),
          queue.getDelayedCount(now + 1),
        ]);
        return [epoch, waiting + prioritized + due] as const;
      }),
    );
    return new Map(counts);
  }

  async stopConsuming(): Promise<void> {
    this.subscriber?.disconnect();
    this.subscriber = undefined;
    await Promise.all(this.workers.splice(0).map((worker) => worker.close()));
    for (const connection of this.connections.splice(0)) connection.disconnect();
  }

  async close(): Promise<void> {
    await this.stopConsuming();
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
    this.connection.disconnect();
  }

  private queue(epoch: number): Queue {
    let queue = this.queues.get(epoch);
    if (queue === undefined) {
      queue = new Queue(queueName(epoch), { connection: this.connection, prefix: this.prefix });
      this.queues.set(epoch, queue);
    }
    return queue;
  }

  private channel(holder: string): string {
    return `${this.prefix}:sticky:${holder}`;
  }
}

function queueName(epoch: number): string {
  return `activations-epoch-${epoch}`;
}

function fallbackId(jobId: string): string {
  return `${jobId}.sticky-fallback`;
}

/** A job's data: the run, and a new run's first-ring hint (rings of one job id collapse into it). */
interface ActivationData {
  runId: string;
  first?: FirstActivation;
}

/** What a ring publishes on its holder's channel: the run, and the fallback job to cancel. */
interface StickyMessage {
  runId: string;
  fallback: string;
  /** When it was rung (ms since the epoch). */
  at: number;
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
