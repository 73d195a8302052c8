/**
 * The floors W1 is compared with, measured in the same run on the same machine:
 *   - Postgres: single-row INSERT + COMMIT (autocommit) rate at 1 and at 8 clients, on a small
 *     table in the bench database, synchronous_commit as the server has it (it must be on);
 *   - BullMQ: a bare Queue and Worker on the same Redis (a key prefix of their own), the
 *     enqueue-to-process round trip one job at a time, and jobs/s with 64 in flight.
 */
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import pg from "pg";
import { summarize, type Summary } from "../sandbox/stats.js";
import { deleteKeys } from "./platform.js";

export interface PgFloor {
  clients: number;
  commitsPerSecond: number;
  latency: Summary;
}

/** `clients` connections, each INSERTing one row per transaction for `seconds`. */
export async function postgresFloor(
  url: string,
  clients: number,
  seconds: number,
): Promise<PgFloor> {
  const pool = new pg.Pool({ connectionString: url, max: clients });
  try {
    await pool.query(
      "CREATE TABLE IF NOT EXISTS bench_floor (id bigserial PRIMARY KEY, body text NOT NULL)",
    );
    const { rows } = await pool.query<{ synchronous_commit: string }>("SHOW synchronous_commit");
    if (rows[0]?.synchronous_commit !== "on")
      throw new Error(
        `synchronous_commit is ${rows[0]?.synchronous_commit} on this server: the figures need it on ` +
          `(ALTER SYSTEM SET synchronous_commit = on; SELECT pg_reload_conf())`,
      );
    const latencies: number[] = [];
    const body = JSON.stringify({ kind: "call.result", result: 1 });
    const lane = async (deadline: number) => {
      const client = await pool.connect();
      try {
        while (performance.now() < deadline) {
          const t0 = performance.now();
          await client.query("INSERT INTO bench_floor (body) VALUES ($1)", [body]);
          latencies.push(performance.now() - t0);
        }
      } finally {
        client.release();
      }
    };
    // A short warm-up (connections open, plans cached), then the measured window.
    await Promise.all(Array.from({ length: clients }, () => lane(performance.now() + 300)));
    latencies.length = 0;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: clients }, () => lane(t0 + seconds * 1000)));
    const elapsed = (performance.now() - t0) / 1000;
    return { clients, commitsPerSecond: latencies.length / elapsed, latency: summarize(latencies) };
  } finally {
    await pool.end();
  }
}

export interface BullFloor {
  /** add() → the worker's processor starts, one job at a time (ms). */
  roundTrip: Summary;
  /** Jobs added with `inFlight` adds outstanding and processed with that concurrency, per second. */
  jobsPerSecond: number;
  inFlight: number;
}

export async function bullmqFloor(redisUrl: string, prefix: string): Promise<BullFloor> {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const workerConnection = connection.duplicate();
  const queue = new Queue("floor", { connection, prefix });
  const waiting = new Map<string, () => void>();
  let processed = 0;
  let allDone: (() => void) | undefined;
  let target = Infinity;
  const worker = new Worker(
    "floor",
    async (job) => {
      waiting.get(job.id!)?.();
      if (++processed >= target) allDone?.();
    },
    { connection: workerConnection, prefix, concurrency: 64 },
  );
  worker.on("error", () => {});
  try {
    await worker.waitUntilReady();
    const once = async (id: string) => {
      const t0 = performance.now();
      const seen = new Promise<void>((resolve) => waiting.set(id, resolve));
      await queue.add("ring", { id }, { jobId: id, removeOnComplete: true, removeOnFail: true });
      await seen;
      waiting.delete(id);
      return performance.now() - t0;
    };
    for (let i = 0; i < 50; i++) await once(`warm-${i}`);
    const trips: number[] = [];
    for (let i = 0; i < 400; i++) trips.push(await once(`trip-${i}`));

    const jobs = 2_000;
    const inFlight = 64;
    processed = 0;
    target = jobs;
    const finished = new Promise<void>((resolve) => (allDone = resolve));
    const t0 = performance.now();
    let next = 0;
    const lane = async () => {
      while (next < jobs) {
        const i = next++;
        await queue.add(
          "ring",
          { i },
          { jobId: `bulk-${i}`, removeOnComplete: true, removeOnFail: true },
        );
      }
    };
    await Promise.all(Array.from({ length: inFlight }, lane));
    await Promise.race([
      finished,
      new Promise((_, reject) =>
        setTimeout(
          () => reject(new Error(`BullMQ floor: ${processed} of ${jobs} jobs processed in 60 s`)),
          60_000,
        ).unref(),
      ),
    ]);
    const jobsPerSecond = jobs / ((performance.now() - t0) / 1000);
    return { roundTrip: summarize(trips), jobsPerSecond, inFlight };
  } finally {
    await worker.close();
    await queue.close();
    connection.disconnect();
    workerConnection.disconnect();
    await deleteKeys(redisUrl, prefix);
  }
}
