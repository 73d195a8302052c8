/** The harness's flags: which workloads, how big. Defaults are issue 4's. */
import { parseArgs } from "node:util";

export const WORKLOADS = ["floors", "W1", "W1-drain", "W1-projections", "W2", "W3", "W4"] as const;
export type Workload = (typeof WORKLOADS)[number];

export interface Flags {
  only: Set<Workload>;
  workers: number;
  /** Worker `--concurrency`; the CLI's default when unset. */
  concurrency?: number;
  /** Requests in flight when submitting or signalling. */
  inFlight: number;
  /** W1 */
  runs: number;
  calls: number;
  /** W2 */
  timerRuns: number;
  timerCalls: number;
  /** W3 */
  longCalls: number;
  hotPokes: number;
  coldPokes: number;
  /** W4 */
  idle: number;
  idleWorkers: number;
  cpuProf: boolean;
  countQueries: boolean;
  /** pg_stat_statements per W1 call (a server that loads it). */
  pgStats: boolean;
  redisUrl: string;
}

const USAGE = `npm run bench:cluster -w load-tests -- [flags]
  --only W1,W2,W3,W4,floors   workloads to run (default: all); W1-drain is W1's execution
                              alone (runs submitted before the workers start); W1-projections
                              is W1 again with \`rewind projector\` exporting to a Collector
                              and sending webhooks (its cost against W1, and its lag)
  --workers N                 rewind worker processes (default 2)
  --concurrency N             each worker's --concurrency (default: the CLI's)
  --in-flight N               API requests in flight when submitting/signalling (default 64)
  --runs N --calls N          W1: runs × tool calls (default 2000 × 10)
  --timer-runs N --timer-calls N   W2: runs × calls, 1 s sleeps between calls (default 200 × 5)
  --long-calls N              W3: calls in the long run (default 10000)
  --hot-pokes N --cold-pokes N     W3: hot and cold activations timed (default 10 and 3)
  --idle N --idle-workers N   W4: idle runs, on how many workers (default 5000 on 1)
  --cpu-prof                  run the API and workers under node --cpu-prof
  --count-queries             count Postgres queries and Redis commands per W1 run
  --pg-stats                  Postgres's time per W1 call by statement, from pg_stat_statements
                              (only on a server that loads it: a scratch cluster of your own)
REDIS_URL (default redis://127.0.0.1:6379), TEST_DATABASE_URL (the Postgres server).`;

export function parseFlags(argv: readonly string[]): Flags {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      only: { type: "string" },
      workers: { type: "string" },
      concurrency: { type: "string" },
      "in-flight": { type: "string" },
      runs: { type: "string" },
      calls: { type: "string" },
      "timer-runs": { type: "string" },
      "timer-calls": { type: "string" },
      "long-calls": { type: "string" },
      "hot-pokes": { type: "string" },
      "cold-pokes": { type: "string" },
      idle: { type: "string" },
      "idle-workers": { type: "string" },
      "cpu-prof": { type: "boolean" },
      "count-queries": { type: "boolean" },
      "pg-stats": { type: "boolean" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const count = (name: string, fallback: number, min = 1): number => {
    const raw = (values as Record<string, string | undefined>)[name];
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min)
      throw new Error(`--${name} must be an integer ≥ ${min}, not ${raw}\n\n${USAGE}`);
    return n;
  };
  const only = new Set<Workload>();
  for (const name of (values.only ?? WORKLOADS.join(",")).split(",")) {
    const found = WORKLOADS.find((w) => w.toLowerCase() === name.trim().toLowerCase());
    if (found === undefined)
      throw new Error(`--only: no workload ${name}; pick from ${WORKLOADS.join(", ")}\n\n${USAGE}`);
    only.add(found);
  }
  const workers = count("workers", 2);
  return {
    only,
    workers,
    ...(values.concurrency !== undefined ? { concurrency: count("concurrency", 64) } : {}),
    inFlight: count("in-flight", 64),
    runs: count("runs", 2_000),
    calls: count("calls", 10),
    timerRuns: count("timer-runs", 200),
    timerCalls: count("timer-calls", 5, 2),
    longCalls: count("long-calls", 10_000),
    hotPokes: count("hot-pokes", 10),
    coldPokes: count("cold-pokes", 3, 0),
    idle: count("idle", 5_000),
    idleWorkers: count("idle-workers", 1),
    cpuProf: values["cpu-prof"] === true,
    countQueries: values["count-queries"] === true,
    pgStats: values["pg-stats"] === true,
    redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
  };
}
