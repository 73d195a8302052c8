import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { RewindError, type FirstActivation } from "@rewind/core";
import type {
  Activation,
  ActivationHandler,
  ActivationQueue,
  ConsumeOptions,
} from "./activation-queue.js";
import {
  FirstRingListeners,
  FirstRingOffers,
  FirstRingRoom,
  firstRingChannel,
  parseOffer,
  type FirstRingOffer,
} from "./first-ring-offers.js";

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
 *
 * A new run's first ring is offered straight to a worker of its epoch with room for it
 * (first-ring-offers.ts).
 */
export class BullMqQueue implements ActivationQueue {
  private readonly queues = new Map<number, Queue>();
  private readonly workers: Worker[] = [];
  private readonly connections: Redis[] = [];
  private subscriber: Redis | undefined;
  private firstRings: FirstRingRoom | undefined;
  private sweeping: NodeJS.Timeout | undefined;
  private readonly listeners: FirstRingListeners;
  private readonly offers: FirstRingOffers;

  private constructor(
    private readonly connection: Redis,
    private readonly prefix: string,
    private readonly stickyTimeoutMs: number,
  ) {
    this.listeners = new FirstRingListeners(connection, prefix);
    this.offers = new FirstRingOffers(connection, prefix, stickyTimeoutMs);
  }

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
    // Duplicate rings share a job id and collapse. The id names the lease generation: a worker
    // killed mid-activation leaves its job active (locked) until BullMQ finds it stalled, and a
    // ring of the next generation must not wait behind it.
    const jobId = leases === undefined ? runId : `${runId}.${leases}`;
    if (holder !== undefined) {
      const fallback = fallbackId(jobId);
      await queue.add(
        "activate",
        { runId },
        { ...ONCE, jobId: fallback, delay: this.stickyTimeoutMs },
      );
      const message = JSON.stringify({ runId, fallback, at: Date.now() } satisfies StickyMessage);
      if ((await this.connection.publish(this.channel(holder), message)) > 0) return;
      await queue.remove(fallback); // no one listens there: the holder is gone
    } else if (first !== undefined) {
      // A new run: offered to a worker with room for it (first-ring-offers.ts).
      const worker = await this.listeners.pick(epoch);
      if (worker !== undefined) {
        const offer = { runId, jobId, first, at: Date.now() };
        if (await this.offers.offer(epoch, worker, offer)) return;
        this.listeners.gone(epoch, worker); // it stopped, or has no room: the queue takes this one
      }
    }
    const data: ActivationData = first === undefined ? { runId } : { runId, first };
    await queue.add("activate", data, { ...ONCE, jobId });
  }

  consume(handler: ActivationHandler, options: ConsumeOptions = {}): void {
    const epochs = options.epochs ?? [1];
    for (const epoch of epochs) {
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
    // Offers of new runs no worker took in time go to their queue (first-ring-offers.ts).
    clearInterval(this.sweeping);
    this.sweeping = setInterval(() => void this.sweepOffers(epochs).catch(() => {}), SWEEP_MS);
    this.sweeping.unref();
    if (options.holder === undefined) return;
    const holder = options.holder;
    const subscriber = (this.subscriber = this.connection.duplicate());
    subscriber.on("error", () => {}); // reconnects by itself; fallbacks cover lost messages
    void subscriber.subscribe(this.channel(holder)).catch(() => {});
    const room = (this.firstRings = new FirstRingRoom(
      subscriber,
      new Map(epochs.map((epoch) => [firstRingChannel(this.prefix, epoch, holder), epoch])),
      options.concurrency ?? 64,
    ));
    room.listen();
    subscriber.on("message", (channel: string, text: string) => {
      const epoch = room.epochOf(channel);
      if (epoch !== undefined) return this.takeOffer(epoch, text, room, handler, options);
      const sticky = parseSticky(text);
      if (sticky === undefined) return; // not a ring: nothing to take
      const { runId, fallback, at } = sticky;
      options.onTaken?.(runId, { delivery: "sticky", waitedMs: Math.max(0, Date.now() - at) });
      // Taken here: the fallback is not needed (if it already started elsewhere, the lease decides).
      for (const queue of this.queues.values()) void queue.remove(fallback).catch(() => {});
      void handler(runId).catch(() => {});
    });
  }

  /** A new run offered to this worker: taken while it has room, else on to the queue at once. */
  private takeOffer(
    epoch: number,
    text: string,
    room: FirstRingRoom,
    handler: ActivationHandler,
    options: ConsumeOptions,
  ): void {
    const offer = parseOffer(text);
    if (offer === undefined) return; // not an offer: nothing to take
    if (!room.admit()) {
      // On its way as this worker stopped listening. Withdrawn by a sweep already: queued there.
      void this.offers
        .withdraw(epoch, text)
        .then((mine) => (mine ? this.enqueue(epoch, offer) : undefined))
        .catch(() => {}); // still filed: a sweep queues it once due
      return;
    }
    this.offers.taken(epoch, text);
    const waitedMs = Math.max(0, Date.now() - offer.at);
    options.onTaken?.(offer.runId, { delivery: "direct", waitedMs });
    room.handling(handler(offer.runId, offer.first).catch(() => {}));
  }

  private async sweepOffers(epochs: readonly number[]): Promise<void> {
    for (const epoch of epochs)
      for (const offer of await this.offers.sweep(epoch, Date.now()))
        await this.enqueue(epoch, offer);
  }

  private async enqueue(epoch: number, { runId, jobId, first }: FirstRingOffer): Promise<void> {
    await this.queue(epoch).add("activate", { runId, first } satisfies ActivationData, {
      ...ONCE,
      jobId,
    });
  }

  /**
   * Activations waiting for a worker, per epoch: waiting + prioritized + delayed ones already due
   * + offers of new runs due and not taken. This is what an autoscaler needs (KEDA's Redis-list
   * scaler reads one list and misses the others). A delayed job that is due stays in BullMQ's
   * delayed set until some worker of its queue promotes it, and an offer due stays filed until a
   * worker's sweep queues it, so with no worker running they are counted here or nowhere; sticky
   * fallbacks and offers not yet due are not backlog (their worker is expected to take the run).
   */
  async backlog(epochs: readonly number[]): Promise<Map<number, number>> {
    const now = Date.now();
    const counts = await Promise.all(
      epochs.map(async (epoch) => {
        const queue = this.queue(epoch);
        const [waiting, prioritized, due, offered] = await Promise.all([
          queue.getWaitingCount(),
          queue.getPrioritizedCount(),
          queue.getDelayedCount(now + 1),
          this.offers.countDue(epoch, now),
        ]);
        return [epoch, waiting + prioritized + due + offered] as const;
      }),
    );
    return new Map(counts);
  }

  async stopConsuming(): Promise<void> {
    clearInterval(this.sweeping);
    const newRunsTaken = this.firstRings?.stop(); // listens no more, at once
    this.firstRings = undefined;
    this.subscriber?.disconnect();
    this.subscriber = undefined;
    await newRunsTaken;
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

/** Jobs leave Redis once done: the next ring of the run is a new job. */
const ONCE = { removeOnComplete: true, removeOnFail: true };

/** How often a consumer moves offers of new runs no worker took in time to their queue. */
const SWEEP_MS = 500;

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

/** A sticky ring's text as Redis passes it on; undefined when it is not one (see parseOffer). */
function parseSticky(text: string): StickyMessage | undefined {
  try {
    const message = JSON.parse(text) as Partial<StickyMessage> | null;
    return typeof message?.runId === "string" &&
      typeof message.fallback === "string" &&
      typeof message.at === "number"
      ? (message as StickyMessage)
      : undefined;
  } catch {
    return undefined;
  }
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
