import { Redis } from "ioredis";

/**
 * Change notices across processes: "run R may have changed", from the worker that committed R's
 * entries to the APIs whose clients wait on R (a result, a journal stream, a signal's effect).
 * A notice is a hint, never data: the API reads the store again on each one, and still reads it
 * on a slower backstop poll, so a lost notice (Redis restarting, a subscriber reconnecting) costs
 * one backstop poll and never a wrong answer.
 *
 * Only watched runs are announced. An API that starts waiting on R sets R's watch key (with a TTL
 * a little past its wait) before it reads the store, so no commit falls between its read and its
 * interest. After each group commit a worker runs one script over the runs it just committed: it
 * PUBLISHes the watched ones, in one message on the prefix's channel, and nothing when none is.
 * Why not publish every commit's run ids on a channel: most commits have no one waiting (W1
 * submits 2,000 runs and waits on none), and every API would then receive and parse every id of
 * every commit of the cluster. With watch keys, an unwatched commit costs the worker one EVALSHA
 * per group commit (not one per run) and Redis a key lookup per run, and no API hears of it.
 */

/**
 * KEYS: two a run just committed: its watch key ({prefix}:watch:{runId}: someone follows every
 * commit) and its end-watch key ({prefix}:watch-end:{runId}: someone waits for its end only).
 * ARGV[1]: the notice channel; then per run, in KEYS' order: its id and "1" if it has ended.
 * Publishes the run ids watched for this commit, space-separated, as one message; returns how many.
 */
const PUBLISH_WATCHED = `
local watched = {}
for i = 1, #KEYS, 2 do
  local id, ended = ARGV[i + 1], ARGV[i + 2]
  if redis.call('EXISTS', KEYS[i]) == 1 or (ended == '1' and redis.call('EXISTS', KEYS[i + 1]) == 1) then
    watched[#watched + 1] = id
  end
end
if #watched > 0 then redis.call('PUBLISH', ARGV[1], table.concat(watched, ' ')) end
return #watched
`;

/**
 * KEYS[1]: a run's watch key. ARGV[1]: for how long, in ms.
 * Makes the key live at least that long: a shorter wait (another API's) never cuts a longer one.
 */
const WATCH = `
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
end
return 1
`;

export interface RunNoticeOptions {
  redisUrl: string;
  /** The same key prefix as the queue's: a cluster's APIs and workers share one channel. */
  prefix?: string;
}

/**
 * The worker's side: `changed(runId)` after each commit. The runs committed in one turn of the
 * event loop (a group commit resolves all its appends together) are announced in one script call.
 */
export class RunNoticePublisher {
  /** Run id → whether it has ended (with any of this turn's commits). */
  private pending = new Map<string, boolean>();
  private scheduled = false;

  private constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    redis.defineCommand("rewindPublishWatched", { lua: PUBLISH_WATCHED });
  }

  static connect(options: RunNoticeOptions): RunNoticePublisher {
    // Notices are best effort: a command queued while Redis is away is dropped, not held.
    const redis = new Redis(options.redisUrl, {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
    });
    redis.on("error", () => {}); // reconnects by itself; the API's backstop poll covers the gap
    return new RunNoticePublisher(redis, options.prefix ?? "rewind");
  }

  changed(runId: string, ended = false): void {
    this.pending.set(runId, ended || this.pending.get(runId) === true);
    if (this.scheduled) return;
    this.scheduled = true;
    // After the microtasks of this turn: every append of the group commit has resolved by then.
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    const runs = [...this.pending];
    this.pending = new Map();
    if (runs.length === 0) return;
    const keys = runs.flatMap(([runId]) => [
      watchKey(this.prefix, runId),
      endWatchKey(this.prefix, runId),
    ]);
    const args = runs.flatMap(([runId, ended]) => [runId, ended ? "1" : "0"]);
    const redis = this.redis as unknown as {
      rewindPublishWatched(keys: number, ...args: string[]): Promise<number>;
    };
    void redis
      .rewindPublishWatched(keys.length, ...keys, channel(this.prefix), ...args)
      .catch(() => {}); // lost: the waiting API reads the store on its backstop poll
  }

  close(): void {
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
      await subscriber.subscribe(channel(prefix));
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
      rewindWatch(key: string, ms: string): Promise<number>;
    };
    await redis
      .rewindWatch(
        (endOnly ? endWatchKey : watchKey)(this.prefix, runId),
        String(Math.max(1, Math.ceil(ms))),
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

function channel(prefix: string): string {
  return `${prefix}:run-changes`;
}
