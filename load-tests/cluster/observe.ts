/**
 * What the harness reads back, with SQL on the bench database (runs are only submitted and
 * signalled through the HTTP API): run states, commit times, journal timestamps, leases. Times
 * from Postgres (`ended_at`, the commit's transaction time) and the journal's `at` (the worker's
 * clock) are compared with the harness's Date.now(): one machine, one clock.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import type pg from "pg";

export interface RunTimes {
  id: string;
  status: string;
  endedMs: number | null;
  error: string | null;
}

export async function runTimes(db: pg.Pool, ids: readonly string[]): Promise<RunTimes[]> {
  const { rows } = await db.query<RunTimes>(
    `SELECT id, status, (extract(epoch FROM ended_at) * 1000)::float8 AS "endedMs",
            error::text AS error
       FROM rw_runs WHERE id = ANY($1)`,
    [ids],
  );
  return rows;
}

async function statusCounts(db: pg.Pool, ids: readonly string[]): Promise<Map<string, number>> {
  const { rows } = await db.query<{ status: string; n: number }>(
    "SELECT status, count(*)::int AS n FROM rw_runs WHERE id = ANY($1) GROUP BY status",
    [ids],
  );
  return new Map(rows.map((r) => [r.status, r.n]));
}

const ENDED = ["completed", "failed", "cancelled", "quarantined"];

/**
 * Polls until every run has one of `statuses` (default: ended), printing progress now and then;
 * throws when `timeoutMs` runs out, saying how far it got. Resolves with the wait in ms.
 */
export async function waitForRuns(
  db: pg.Pool,
  ids: readonly string[],
  what: string,
  timeoutMs: number,
  statuses: readonly string[] = ENDED,
): Promise<number> {
  const t0 = performance.now();
  let lastPrint = t0;
  for (;;) {
    const counts = await statusCounts(db, ids);
    const done = statuses.reduce((n, s) => n + (counts.get(s) ?? 0), 0);
    if (done === ids.length) return performance.now() - t0;
    const now = performance.now();
    const summary = [...counts].map(([s, n]) => `${s} ${n}`).join(", ");
    if (now - t0 > timeoutMs)
      throw new Error(
        `${what}: ${done} of ${ids.length} runs reached ${statuses.join("/")} within ` +
          `${(timeoutMs / 1000).toFixed(0)} s (now: ${summary}). Look at the worker logs below ` +
          `for errors, or give it more time with a smaller size flag`,
      );
    if (now - lastPrint > 10_000) {
      console.log(`    … ${what}: ${done}/${ids.length} (${summary})`);
      lastPrint = now;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Fails with the first error if any run did not complete. */
export function assertCompleted(what: string, runs: readonly RunTimes[]): void {
  const bad = runs.filter((r) => r.status !== "completed");
  if (bad.length > 0)
    throw new Error(
      `${what}: ${bad.length} of ${runs.length} runs did not complete; the first, ${bad[0]!.id}, ` +
        `is ${bad[0]!.status}: ${bad[0]!.error ?? "(no error)"}`,
    );
}

/** The journal's `at` (ms) of every entry of this kind in these runs, sorted. */
export async function entryTimes(
  db: pg.Pool,
  ids: readonly string[],
  kind: string,
): Promise<Float64Array> {
  const { rows } = await db.query<{ at: string }>(
    "SELECT at FROM rw_journal WHERE run_id = ANY($1) AND kind = $2",
    [ids, kind],
  );
  return Float64Array.from(rows, (r) => Number(r.at)).sort();
}

/**
 * Transactions that wrote these runs' journals after their first entry (the workers' commits;
 * run.started is the API's): rows written by one transaction share its xmin. With entries,
 * this says how many entries one commit carried on average (the group-commit effect).
 */
export async function workerCommits(
  db: pg.Pool,
  ids: readonly string[],
): Promise<{ commits: number; entries: number }> {
  const { rows } = await db.query<{ commits: number; entries: number }>(
    `SELECT count(DISTINCT xmin::text)::int AS commits, count(*)::int AS entries
       FROM rw_journal WHERE run_id = ANY($1) AND seq > 1`,
    [ids],
  );
  return rows[0]!;
}

/** For each fired timer, how late it fired: timer.fired's `at` minus its timer.set's `due` (ms). */
export async function timerLateness(db: pg.Pool, ids: readonly string[]): Promise<Float64Array> {
  const { rows } = await db.query<{ late: string }>(
    `SELECT f.at - (s.body->>'due')::bigint AS late
       FROM rw_journal f
       JOIN rw_journal s ON s.run_id = f.run_id AND s.seq = (f.body->>'timerSeq')::int
      WHERE f.run_id = ANY($1) AND f.kind = 'timer.fired' AND s.kind = 'timer.set'`,
    [ids],
  );
  return Float64Array.from(rows, (r) => Number(r.late)).sort();
}

export async function lastSeq(db: pg.Pool | pg.Client, runId: string): Promise<number> {
  const { rows } = await db.query<{ seq: number | null }>(
    "SELECT max(seq) AS seq FROM rw_journal WHERE run_id = $1",
    [runId],
  );
  return rows[0]?.seq ?? 0;
}

/** The run's lease owner while its lease is live, else null. */
export async function leaseOwner(db: pg.Pool, runId: string): Promise<string | null> {
  const { rows } = await db.query<{ owner: string | null }>(
    `SELECT CASE WHEN lease_expires_at > now() THEN lease_owner END AS owner
       FROM rw_runs WHERE id = $1`,
    [runId],
  );
  return rows[0]?.owner ?? null;
}

/** Live leases per owner among these runs: which worker holds how many hot runs. */
export async function leasesByOwner(
  db: pg.Pool,
  ids: readonly string[],
): Promise<Map<string, number>> {
  const { rows } = await db.query<{ owner: string; n: number }>(
    `SELECT lease_owner AS owner, count(*)::int AS n FROM rw_runs
      WHERE id = ANY($1) AND lease_owner IS NOT NULL AND lease_expires_at > now()
      GROUP BY lease_owner`,
    [ids],
  );
  return new Map(rows.map((r) => [r.owner, r.n]));
}

/**
 * Polls (every millisecond or so, on a client of its own) until the run's journal reaches
 * `seq`; resolves with the time it took from `t0` (performance.now()) in ms.
 */
export async function waitForSeq(
  client: pg.Client,
  runId: string,
  seq: number,
  t0: number,
  timeoutMs: number,
): Promise<number> {
  for (;;) {
    if ((await lastSeq(client, runId)) >= seq) return performance.now() - t0;
    if (performance.now() - t0 > timeoutMs)
      throw new Error(
        `run ${runId}'s journal did not reach seq ${seq} within ${timeoutMs / 1000} s ` +
          `(it is at ${await lastSeq(client, runId)})`,
      );
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/**
 * After a failure: writes the journals of up to `limit` runs still `running` (the ones most
 * likely stuck) to `dir`, one JSON line an entry, so they can be read after the database is gone.
 */
export async function dumpRunningJournals(db: pg.Pool, dir: string, limit = 3): Promise<string[]> {
  const { rows: runs } = await db.query<{ id: string }>(
    "SELECT id FROM rw_runs WHERE status = 'running' ORDER BY updated_at LIMIT $1",
    [limit],
  );
  const files: string[] = [];
  for (const { id } of runs) {
    const { rows } = await db.query<{ seq: number; kind: string; at: string; body: unknown }>(
      "SELECT seq, kind, at, body FROM rw_journal WHERE run_id = $1 ORDER BY seq",
      [id],
    );
    const file = path.join(dir, `running-${id}.jsonl`);
    writeFileSync(file, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    files.push(file);
  }
  return files;
}
