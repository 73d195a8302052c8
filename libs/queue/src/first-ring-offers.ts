import type { Redis } from "ioredis";
import type { FirstActivation } from "@rewind/core";

/**
 * A new run's first ring, offered straight to a worker. Through an epoch's queue a new run cost
 * a BullMQ job's whole life in Redis (an add, blocking pops, the moves to active and to completed,
 * each a Lua script that also writes the queue's event stream) and a millisecond or more before a
 * worker began it; a delayed job behind a PUBLISH, as a hot run's ring has, cost as much again.
 * An offer is one small script at the API and one ZREM at the worker. Alternating builds in one
 * sitting on the peers' workload (load-tests/peers), offers were worth 13% more steps a second at
 * C = 1 (p50 per workflow 20.9 → 17.7 ms) and 4 to 9% at C = 32; the delayed-job variant, nothing.
 *
 * - **Who is offered.** Each worker with room for more new runs listens on one channel per epoch
 *   it serves, named after itself (`firstRingChannel`). Listening is the whole registry: Redis
 *   drops a subscription with its connection, so a worker that stops or dies is offered nothing
 *   more, and a busy one stops listening (`FirstRingRoom`). The API finds an epoch's listeners
 *   with PUBSUB CHANNELS at most once a second and offers new runs to them in turn
 *   (`FirstRingListeners`).
 * - **An offer is kept until taken.** The script that publishes it also files it, due
 *   `stickyTimeoutMs` (2 s) later, in the epoch's sorted set of offers; the worker that takes it
 *   removes it. One that no one took by then (the worker stalled, died, or lost its connection
 *   with the message on the way) is moved to the epoch's queue by any worker's sweep, and counts
 *   in the backlog once due, as a queued job would. A worker with no room left for an offer (it was
 *   on its way as the worker stopped listening) moves it to the queue at once.
 * - **A PUBLISH that finds no one** files nothing: the ring goes to the epoch's queue as before.
 */
export function firstRingChannel(prefix: string, epoch: number, worker: string): string {
  return `${channelPrefix(prefix, epoch)}${worker}`;
}

function channelPrefix(prefix: string, epoch: number): string {
  return `${prefix}:first:${epoch}:`;
}

/** What an offer carries, and its member in the offers set (its text is the member). */
export interface FirstRingOffer {
  runId: string;
  /** The job id its ring would have on the queue (rings of one lease generation collapse). */
  jobId: string;
  first: FirstActivation;
  /** When it was offered, ms since the Unix epoch: also what makes each offer's text its own. */
  at: number;
}

/**
 * An offer's text as Redis passes it on; undefined when it is not one (Redis is a doorbell, and
 * nothing read from it may take a worker down: the run's first commit checks what it carries).
 */
export function parseOffer(text: string): FirstRingOffer | undefined {
  try {
    const offer = JSON.parse(text) as Partial<FirstRingOffer> | null;
    return typeof offer?.runId === "string" &&
      typeof offer.jobId === "string" &&
      typeof offer.at === "number" &&
      typeof offer.first === "object" &&
      offer.first !== null
      ? (offer as FirstRingOffer)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * KEYS[1]: the epoch's offers. ARGV: the worker's channel, the offer, when it falls due (ms).
 * Publishes the offer and, if a worker heard it, files it until then. Returns the listeners.
 */
const OFFER = `
local heard = redis.call('PUBLISH', ARGV[1], ARGV[2])
if heard > 0 then redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2]) end
return heard
`;

/** KEYS[1]: the epoch's offers. ARGV: now (ms), how many. Takes the offers due, for the queue. */
const SWEEP = `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
if #due > 0 then redis.call('ZREM', KEYS[1], unpack(due)) end
return due
`;

/** The offers of each epoch, as Redis keeps them: made, taken, and swept when no one took them. */
export class FirstRingOffers {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly dueAfterMs: number,
  ) {
    redis.defineCommand("rewindOfferFirstRing", { lua: OFFER, numberOfKeys: 1 });
    redis.defineCommand("rewindSweepFirstRings", { lua: SWEEP, numberOfKeys: 1 });
  }

  /** Offers the run to `worker`: false when it does not listen (nothing is then filed). */
  async offer(epoch: number, worker: string, offer: FirstRingOffer): Promise<boolean> {
    const heard = await this.scripts.rewindOfferFirstRing(
      this.key(epoch),
      firstRingChannel(this.prefix, epoch, worker),
      JSON.stringify(offer),
      String(offer.at + this.dueAfterMs),
    );
    return heard > 0;
  }

  /** Taken by the worker it was offered to: no sweep moves it to the queue. */
  taken(epoch: number, text: string): void {
    this.withdraw(epoch, text).catch(() => {}); // else swept: the lease decides
  }

  /** Removed from the set: false when a sweep took it first. */
  async withdraw(epoch: number, text: string): Promise<boolean> {
    return (await this.redis.zrem(this.key(epoch), text)) > 0;
  }

  /** The offers no one took in time (at most `limit`), removed from the set. */
  async sweep(epoch: number, now: number, limit = 100): Promise<FirstRingOffer[]> {
    const due = await this.scripts.rewindSweepFirstRings(
      this.key(epoch),
      String(now),
      String(limit),
    );
    return due.flatMap((text) => parseOffer(text) ?? []);
  }

  /** Offers due and not yet swept: activations waiting for a worker (the backlog). */
  async countDue(epoch: number, now: number): Promise<number> {
    return this.redis.zcount(this.key(epoch), "-inf", String(now));
  }

  private key(epoch: number): string {
    return `${this.prefix}:first-offers:${epoch}`;
  }

  private get scripts() {
    return this.redis as unknown as {
      rewindOfferFirstRing(
        key: string,
        channel: string,
        offer: string,
        due: string,
      ): Promise<number>;
      rewindSweepFirstRings(key: string, now: string, limit: string): Promise<string[]>;
    };
  }
}

/** How long the API trusts the list of an epoch's listeners it read. */
const LISTENERS_FRESH_MS = 1_000;

/**
 * The API's side: who listens for new runs of each epoch, read again at most once a second (in
 * the background while a list of listeners is known), and offered runs in turn.
 */
export class FirstRingListeners {
  private readonly known = new Map<number, { workers: string[]; readAt: number }>();
  private readonly reading = new Map<number, Promise<string[]>>();
  private turn = 0;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** A worker listening for new runs of `epoch`, or undefined when none was. */
  async pick(epoch: number): Promise<string | undefined> {
    const known = this.known.get(epoch);
    let workers = known?.workers;
    if (known === undefined || Date.now() - known.readAt > LISTENERS_FRESH_MS) {
      const reading = this.read(epoch);
      // The list read last stands in meanwhile, unless it had no one to offer runs to.
      if (workers === undefined || workers.length === 0) workers = await reading;
      else reading.catch(() => {});
    }
    if (workers === undefined || workers.length === 0) return undefined;
    this.turn = (this.turn + 1) % workers.length;
    return workers[this.turn];
  }

  /**
   * An offer to `worker` found no one (it stopped, or has no room): it is offered nothing more
   * until the list is read again, so a burst of new runs that fills every worker costs each
   * worker one refused offer a second, not one per run.
   */
  gone(epoch: number, worker: string): void {
    const known = this.known.get(epoch);
    if (known !== undefined) known.workers = known.workers.filter((w) => w !== worker);
  }

  private read(epoch: number): Promise<string[]> {
    let reading = this.reading.get(epoch);
    if (reading === undefined) {
      const start = channelPrefix(this.prefix, epoch);
      reading = (this.redis.pubsub("CHANNELS", `${globEscape(start)}*`) as Promise<string[]>)
        .then((channels) => {
          const workers = channels.map((channel) => channel.slice(start.length));
          this.known.set(epoch, { workers, readAt: Date.now() });
          return workers;
        })
        .finally(() => this.reading.delete(epoch));
      this.reading.set(epoch, reading);
    }
    return reading;
  }
}

/** A Redis glob pattern matching `text` itself (a prefix may hold `*`, `?`, `[` or `\`). */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, "\\$&");
}

/**
 * A worker's side: it listens for new runs while it has room for them. Room is `room` new runs
 * being handled at once (the epoch queues' jobs count apart, as each queue's do): at that many
 * it stops listening, and listens again once half are done.
 */
export class FirstRingRoom {
  private readonly handled = new Set<Promise<void>>();
  private listening = false;
  private stopped = false;

  constructor(
    private readonly subscriber: Redis,
    /** Each channel this worker hears new runs on, and the epoch it is for. */
    private readonly channels: ReadonlyMap<string, number>,
    private readonly room: number,
  ) {}

  /** The epoch whose new runs `channel` offers, if it is one of this worker's. */
  epochOf(channel: string): number | undefined {
    return this.channels.get(channel);
  }

  listen(): void {
    if (this.listening || this.stopped) return;
    this.listening = true;
    // While Redis is away the command waits for it, and ioredis subscribes again on reconnecting.
    void this.subscriber.subscribe(...this.channels.keys()).catch(() => {
      this.listening = false; // the connection was closed: the worker stops
    });
  }

  /** Whether a new run offered now may be taken. */
  admit(): boolean {
    return !this.stopped && this.handled.size < this.room;
  }

  /** A new run taken: counted until `done` settles. */
  handling(done: Promise<void>): void {
    const counted = done.finally(() => {
      this.handled.delete(counted);
      if (this.handled.size <= this.room / 2) this.listen();
    });
    this.handled.add(counted);
    if (this.handled.size >= this.room && this.listening) {
      this.listening = false;
      void this.subscriber.unsubscribe(...this.channels.keys()).catch(() => {});
    }
  }

  /** Listens no more, and waits for the new runs it took. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.handled);
  }
}
