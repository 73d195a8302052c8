import { Redis } from "ioredis";

/**
 * Change notices across processes: "run R may have changed", from the worker that committed R's
 * entries to the APIs whose clients wait on R (a result, a journal stream, a signal's effect).
 * A notice is a hint, never data: the API reads the store again on each one, and still reads it
 * on a slower backstop poll, so a lost notice (Redis restarting, a subscriber reconnecting) costs
 * one backstop poll and never a wrong answer.
 *
 * Only watched runs are announced. An API that starts waiting on R runs one script before it
 * reads the store: it sets R's watch key (with a TTL a little past its wait) and broadcasts the
 * watch on the prefix's watch channel, so no commit falls between its read and its interest.
 * Why not publish every commit's run ids: most commits have no one waiting (W1 submits 2,000
 * runs and waits on none), and every API would then receive and parse every id of every commit.
 *
 * A worker keeps the watches it heard in memory, so a commit costs Redis nothing unless someone
 * waits on it. A run's first commit here asks Redis for its watch keys instead (one script per
 * group commit, for the runs it has not seen yet): a watch set before this worker listened, or
 * before it took the run over. A watch heard for a run this worker has seen is answered with a
 * notice at once: one of its commits may have fallen between the API's read and the moment this
 * worker heard of the watch. While its subscription is down the worker forgets every run it has
 * seen, so each asks Redis again until the subscription is back.
 */

/**
 * KEYS: two a run just committed: its watch key ({prefix}:watch:{runId}: someone follows every
 * commit) and its end-watch key ({prefix}:watch-end:{runId}: someone waits for its end only).
 * ARGV[1]: the notice channel; then per run, in KEYS' order: its id and "1" if it has ended.
 * Publishes the run ids watched for this commit, space-separated, as one message. Returns, per
 * run, how many ms each of its two keys still lives (negative: none), for the worker to remember.
 */
const PUBLISH_WATCHED = `
local watched = {}
local ttls = {}
for i = 1, #KEYS, 2 do
  local id, ended = ARGV[i + 1], ARGV[i + 2]
  local every, atEnd = redis.call('PTTL', KEYS[i]), redis.call('PTTL', KEYS[i + 1])
  ttls[#ttls + 1] = every
  ttls[#ttls + 1] = atEnd
  if every > 0 or (ended == '1' and atEnd > 0) then
    watched[#watched + 1] = id
  end
end
if #watched > 0 then redis.call('PUBLISH', ARGV[1], table.concat(watched, ' ')) end
return ttls
`;

/**
 * KEYS[1]: a run's watch key. ARGV[1]: for how long, in ms. ARGV[2]: the watch channel.
 * ARGV[3]: the watch as workers hear it: "<runId> <ms> all|end".
 * Makes the key live at least that long (a shorter wait, another API's, never cuts a longer
 * one), then tells every worker.
 */
const WATCH = `
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
end
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1
`;

export interface RunNoticeOptions {
  redisUrl: string;
  /** The same key prefix as the queue's: a cluster's APIs and workers share one channel. */
  prefix?: string;
}

/** Until when someone waits on a run: for every commit, and for the one that ends it. */
interface Watched {
  every: number;
  end: number;
}

/** Runs a worker remembers having seen: beyond it, the oldest ask Redis again. */
const MAX_SEEN = 50_000;

/**
 * The worker's side: `changed(runId)` after each commit. The runs committed in one turn of the
 * event loop (a group commit resolves all its appends together) are announced together.
 */
export class RunNoticePublisher {
  /** Run id → whether it has ended (with any of this turn's commits). */
  private pending = new Map<string, boolean>();
  /** Runs to announce whatever they did: a watch was just heard for them. */
  private forced = new Set<string>();
  private scheduled = false;
  /**
   * Runs whose watches this worker knows (Redis answered for them while the subscription was
   * live, and it has stayed live since, so every later watch was heard), and whether they ended.
   */
  private readonly seen = new Map<string, boolean>();
  private readonly watched = new Map<string, Watched>();
  /** Counts the subscription's losses: an answer from before one is not trusted. */
  private generation = 0;
  private listening = false;
  /** Commits that needed no Redis command: no one waits on them (tests). */
  skipped = 0;

  private constructor(
    private readonly redis: Redis,
    private readonly subscriber: Redis,
    private readonly prefix: string,
    private readonly now: () => number,
  ) {
    redis.defineCommand("rewindPublishWatched", { lua: PUBLISH_WATCHED });
    subscriber.on("message", (_channel: string, text: string) => this.heard(text));
    // Watches broadcast while the subscription is down are lost: forget what was seen.
    subscriber.on("close", () => {
      this.listening = false;
      this.generation++;
      this.seen.clear();
    });
    subscriber.on("ready", () => this.listen());
  }

  static connect(options: RunNoticeOptions, now: () => number = Date.now): RunNoticePublisher {
    // Notices are best effort: a command queued while Redis is away is dropped, not held.
    const redis = new Redis(options.redisUrl, {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
    });
    const prefix = options.prefix ?? "rewind";
    const subscriber = new Redis(options.redisUrl, {
      maxRetriesPerRequest: null,
      autoResubscribe: false, // `listen` subscribes on each ready, and only then trusts it
      connectionName: `${prefix}:run-watches`, // named in CLIENT LIST, for operators and tests
    });
    redis.on("error", () => {}); // reconnects by itself; the API's backstop poll covers the gap
    subscriber.on("error", () => {});
    return new RunNoticePublisher(redis, subscriber, prefix, now);
  }

  /** Whether watches are heard now: while not, every commit asks Redis. */
  get isListening(): boolean {
    return this.listening;
  }

  /** Resolves once the watch channel is heard; until then every commit asks Redis. */
  async listeningNow(): Promise<void> {
    while (!this.listening) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  private listen(): void {
    const generation = this.generation;
    this.subscriber.subscribe(watchChannel(this.prefix)).then(
      () => (this.listening = generation === this.generation),
      () => {}, // the next ready subscribes again
    );
  }

  /** A watch broadcast by an API: remembered, and answered at once for a run seen here. */
  private heard(text: string): void {
    const [runId, ms, what] = text.split(" ");
    if (runId === undefined || !(Number(ms) > 0)) return;
    const endOnly = what === "end";
    this.remember(runId, endOnly ? -1 : Number(ms), Number(ms));
    // Not seen: its next commit asks Redis, which knows of this watch. An end-only watch misses
    // nothing of a run that has not ended here.
    const ended = this.seen.get(runId);
    if (ended === undefined || (endOnly && !ended)) return;
    this.forced.add(runId);
    this.schedule();
  }

  private remember(runId: string, everyMs: number, endMs: number): void {
    const now = this.now();
    const was = this.watched.get(runId);
    const watch = {
      every: Math.max(was?.every ?? 0, everyMs > 0 ? now + everyMs : 0),
      end: Math.max(was?.end ?? 0, endMs > 0 ? now + endMs : 0),
    };
    if (watch.every <= now && watch.end <= now) return;
    this.watched.set(runId, watch);
    if (this.watched.size > MAX_SEEN)
      for (const [id, { every, end }] of this.watched)
        if (every <= now && end <= now) this.watched.delete(id);
  }

  /** After a commit of `runId`; `ended`: it ended the run. */
  changed(runId: string, ended = false): void {
    this.pending.set(runId, ended || this.pending.get(runId) === true);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // After the microtasks of this turn: every append of the group commit has resolved by then.
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    const pending = this.pending;
    const announce = this.forced;
    this.pending = new Map();
    this.forced = new Set();
    const now = this.now();
    const unknown: [string, boolean][] = [];
    for (const [runId, ended] of pending) {
      if (!this.seen.has(runId)) {
        unknown.push([runId, ended]);
        continue;
      }
      if (ended) this.seen.set(runId, true);
      if (announce.has(runId)) continue;
      const watch = this.watched.get(runId);
      if (watch !== undefined && (watch.every > now || (ended && watch.end > now)))
        announce.add(runId);
      else this.skipped++;
    }
    if (announce.size > 0)
      void this.redis.publish(changesChannel(this.prefix), [...announce].join(" ")).catch(() => {});
    if (unknown.length > 0) this.ask(unknown);
  }

  /**
   * Runs not seen yet: Redis publishes the watched ones and says how long each is watched. Seen
   * from its answer on, if the subscription stayed live meanwhile: a commit before the answer
   * asks again (a watch set since is in the keys), one after it goes by the watches heard.
   */
  private ask(runs: readonly [string, boolean][]): void {
    const generation = this.listening ? this.generation : -1;
    const keys = runs.flatMap(([runId]) => [
      watchKey(this.prefix, runId),
      endWatchKey(this.prefix, runId),
    ]);
    const args = runs.flatMap(([runId, ended]) => [runId, ended ? "1" : "0"]);
    const redis = this.redis as unknown as {
      rewindPublishWatched(keys: number, ...args: string[]): Promise<number[]>;
    };
    void redis
      .rewindPublishWatched(keys.length, ...keys, changesChannel(this.prefix), ...args)
      .then((ttls) => {
        runs.forEach(([runId], i) => this.remember(runId, ttls[2 * i]!, ttls[2 * i + 1]!));
        if (generation !== this.generation || !this.listening) return;
        for (const [runId, ended] of runs) {
          this.seen.set(runId, ended || this.seen.get(runId) === true);
          if (this.seen.size > MAX_SEEN) this.seen.delete(this.seen.keys().next().value!);
        }
      })
      .catch(() => {}); // lost: the waiting API reads the store on its backstop poll
  }

  close(): void {
    this.subscriber.disconnect();
    this.redis.disconnect();
  }
}

/** The API's side: marks runs watched, and hears the notices for them. */
export class RunNoticeSubscriber {
  private constructor(
    private readonly redis: Redis,
    private readonly subscriber: Redis,
    private readonly prefix: string,
  ) {
    redis.defineCommand("rewindWatch", { lua: WATCH, numberOfKeys: 1 });
  }

  /** Subscribes to the prefix's channel; `onNotice` gets the run ids of each notice. */
  static async connect(
    options: RunNoticeOptions,
    onNotice: (runIds: readonly string[]) => void,
  ): Promise<RunNoticeSubscriber> {
    const prefix = options.prefix ?? "rewind";
    const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 1 });
    const subscriber = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
    redis.on("error", () => {}); // reconnects by itself; waits fall back to the backstop poll
    subscriber.on("error", () => {}); // ioredis subscribes again after reconnecting
    subscriber.on("message", (_channel: string, text: string) => onNotice(text.split(" ")));
    try {
      await subscriber.subscribe(changesChannel(prefix));
    } catch (error) {
      redis.disconnect();
      subscriber.disconnect();
      throw error;
    }
    return new RunNoticeSubscriber(redis, subscriber, prefix);
  }

  /**
   * Asks for notices about `runId` for the next `ms`: of every commit, or with `endOnly` of the
   * commit that ends it (a result's wait: a 10-step run then costs one read, not ten). Awaited
   * before the store is read, so a commit after that read is announced. Never fails: without
   * Redis, waits rely on the poll.
   */
  async watch(runId: string, ms: number, endOnly = false): Promise<void> {
    const redis = this.redis as unknown as {
      rewindWatch(key: string, ms: string, channel: string, watch: string): Promise<number>;
    };
    const lasts = String(Math.max(1, Math.ceil(ms)));
    await redis
      .rewindWatch(
        (endOnly ? endWatchKey : watchKey)(this.prefix, runId),
        lasts,
        watchChannel(this.prefix),
        `${runId} ${lasts} ${endOnly ? "end" : "all"}`,
      )
      .catch(() => {});
  }

  close(): void {
    this.subscriber.disconnect();
    this.redis.disconnect();
  }
}

function watchKey(prefix: string, runId: string): string {
  return `${prefix}:watch:${runId}`;
}

function endWatchKey(prefix: string, runId: string): string {
  return `${prefix}:watch-end:${runId}`;
}

/** Where workers announce commits of watched runs (APIs listen). */
function changesChannel(prefix: string): string {
  return `${prefix}:run-changes`;
}

/** Where APIs announce the runs they start waiting on (workers listen). */
function watchChannel(prefix: string): string {
  return `${prefix}:run-watches`;
}
