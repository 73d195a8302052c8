import type { EntryRow } from "./encoding.js";
import type { SqlClient } from "./sql.js";

/**
 * What the projector reads (migration 0012, docs/traces.md): committed journal rows and
 * activation rows by the transaction that wrote them, and one cursor per sink.
 *
 * The cursor of a sink is a transaction id `below`: every row written by a transaction below it
 * was delivered. A window is read up to the horizon, pg_snapshot_xmin(pg_current_snapshot()), the
 * oldest transaction still running: each transaction below it has ended, so no row below it can
 * still appear, and a cursor that never passes the horizon never skips a row that commits late
 * (a serial would: it is drawn at insert, not at commit).
 */

/** A journal row as the projections see it: where it is, when it committed, by whom. */
export interface CommittedRow {
  runId: string;
  seq: number;
  kind: string;
  /** Wall time of its commit, in microseconds since the epoch. */
  committedUs: number;
}

export interface CommittedActivation {
  runId: string;
  seq: number;
  kind: "hot" | "cold";
  replayed: number;
  attempt: number;
  scheduleToStartMs: number | null;
  startedUs: number;
  committedUs: number;
}

export interface ProjectionWindow {
  rows: CommittedRow[];
  activations: CommittedActivation[];
  /** The cursor once this window is delivered: every transaction below it is in it or before. */
  nextBelow: bigint;
  /**
   * Transactions with journal rows in the window, whether or not their rows are among `rows`
   * (a window read for some kinds only): none, and nothing has committed since `below`.
   */
  transactions: number;
  /**
   * Cut by the limit: more has committed beyond it. Otherwise it reads up to the horizon, and the
   * reader is caught up.
   */
  full: boolean;
}

export interface ProjectionCursor {
  sink: string;
  below: bigint;
  delivered: number;
  updatedAt: Date;
  /** Journal rows committed and not yet delivered. */
  pendingRows: number;
  /**
   * Commit time of the first row (by transaction id) not yet delivered, the transaction the
   * cursor waits on: the sink's lag starts there.
   */
  oldestPending?: Date;
}

const us = (column: string) =>
  `(extract(epoch FROM ${column}) * 1000000)::bigint::text AS ${column.split(".").pop()}_us`;

/**
 * The next window after `below`: whole transactions only, at most about `limit` rows. A window
 * cut by the limit ends at the last transaction it holds whole; one longer than the limit is
 * still taken whole (a transaction is delivered in one piece).
 *
 * One statement: its snapshot is the one the horizon is read from, so every transaction below
 * the horizon has ended and is visible to it. Four statements (the horizon, the window's
 * transactions, its rows, its activations) cost each sink four round trips a window, a quarter
 * of the projector's statements under W1.
 *
 * With `kinds` (a sink that projects only some: webhooks), only the rows of those kinds come
 * back, and no activations: the window's bounds are still every transaction's, and a window of
 * 600 rows brings that sink the few it wants.
 */
export async function readWindow(
  sql: SqlClient,
  below: bigint,
  limit: number,
  kinds?: ReadonlySet<string>,
): Promise<ProjectionWindow> {
  const found = await sql.query<
    Omit<ActivationRow, "kind"> & {
      src: "a" | "j" | "w";
      kind: string;
      up_to: string | null;
      cut: boolean | null;
      n: number | null;
    }
  >(
    `WITH horizon AS (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS h),
     xids AS (
       SELECT DISTINCT xid FROM rw_journal
        WHERE xid >= $1::text::xid8 AND xid < (SELECT h FROM horizon) ORDER BY xid LIMIT $2),
     bound AS (
       SELECT CASE WHEN (SELECT count(*) FROM xids) = $2
                   THEN ((SELECT xid FROM xids ORDER BY xid DESC LIMIT 1)::text::numeric + 1)::text::xid8
                   ELSE (SELECT h FROM horizon) END AS up_to,
              (SELECT count(*) FROM xids) = $2 AS cut, (SELECT count(*) FROM xids)::int AS n)
     SELECT 'w' AS src, up_to::text AS up_to, cut, n, NULL AS run_id, NULL::int AS seq, NULL AS kind,
            NULL::int AS replayed, NULL::int AS attempt, NULL::int AS schedule_to_start_ms,
            NULL AS started_at_us, NULL AS committed_at_us, NULL::xid8 AS x
       FROM bound
     UNION ALL
     SELECT 'j', NULL, NULL, NULL, run_id, seq, kind, NULL, NULL, NULL, NULL, ${us("committed_at")}, xid
       FROM rw_journal WHERE xid >= $1::text::xid8 AND xid < (SELECT up_to FROM bound)
                         AND ($3::text[] IS NULL OR kind = ANY ($3::text[]))
     UNION ALL
     SELECT 'a', NULL, NULL, NULL, run_id, seq, kind, replayed, attempt, schedule_to_start_ms,
            ${us("started_at")}, ${us("committed_at")}, xid
       FROM rw_activations WHERE xid >= $1::text::xid8 AND xid < (SELECT up_to FROM bound)
                             AND $3::text[] IS NULL
     ORDER BY src DESC, x, run_id, seq`,
    [below.toString(), limit, kinds === undefined ? null : [...kinds]],
  );
  const bound = found[0]!;
  const upTo = BigInt(bound.up_to!);
  // The horizon has not passed the cursor: nothing below it can have committed since.
  if (upTo <= below)
    return { rows: [], activations: [], nextBelow: below, transactions: 0, full: false };
  const rows: CommittedRow[] = [];
  const activations: CommittedActivation[] = [];
  for (const r of found)
    if (r.src === "j")
      rows.push({
        runId: r.run_id,
        seq: Number(r.seq),
        kind: r.kind,
        committedUs: Number(r.committed_at_us),
      });
    else if (r.src === "a") activations.push(toActivation(r as ActivationRow));
  return {
    rows,
    activations,
    nextBelow: upTo,
    transactions: Number(bound.n),
    full: bound.cut === true,
  };
}

/** An rw_activations row as the projections read it. */
interface ActivationRow {
  run_id: string;
  seq: number;
  kind: "hot" | "cold";
  replayed: number;
  attempt: number;
  schedule_to_start_ms: number | null;
  started_at_us: string;
  committed_at_us: string;
}

function toActivation(r: ActivationRow): CommittedActivation {
  return {
    runId: r.run_id,
    seq: Number(r.seq),
    kind: r.kind,
    replayed: Number(r.replayed),
    attempt: Number(r.attempt),
    scheduleToStartMs: r.schedule_to_start_ms === null ? null : Number(r.schedule_to_start_ms),
    startedUs: Number(r.started_at_us),
    committedUs: Number(r.committed_at_us),
  };
}

/** A run as the projections need it: its rows' commit times, activations and traceparent. */
export interface ProjectedRun {
  runId: string;
  traceparent: string | null;
  /** Commit time (µs) of each seq. */
  committedUs: Map<number, number>;
  activations: CommittedActivation[];
}

/** The run's projection data from `fromSeq` on (its rows' commit times, activations starting there). */
export async function readProjectedRun(
  sql: SqlClient,
  runId: string,
  fromSeq = 1,
): Promise<ProjectedRun | undefined> {
  const run = await sql.query<{ traceparent: string | null }>(
    "SELECT traceparent FROM rw_runs WHERE id = $1",
    [runId],
  );
  if (run[0] === undefined) return undefined;
  const rows = await sql.query<{ seq: number; committed_at_us: string }>(
    `SELECT seq, ${us("committed_at")} FROM rw_journal WHERE run_id = $1 AND seq >= $2 ORDER BY seq`,
    [runId, fromSeq],
  );
  const activations = await sql.query<ActivationRow>(
    `SELECT run_id, seq, kind, replayed, attempt, schedule_to_start_ms, ${us("started_at")}, ${us("committed_at")}
       FROM rw_activations WHERE run_id = $1 AND seq >= $2 ORDER BY seq`,
    [runId, fromSeq],
  );
  return {
    runId,
    traceparent: run[0].traceparent,
    committedUs: new Map(rows.map((r) => [Number(r.seq), Number(r.committed_at_us)])),
    activations: activations.map(toActivation),
  };
}

/** What a batch read returns for one run: its journal rows from the seq asked, undecoded. */
export interface ProjectedRows {
  run: ProjectedRun;
  /** The run's namespace: a sealed value opens only as its namespace's. */
  namespace: string;
  rows: (EntryRow & { committed_at_us: string })[];
}

/**
 * Many runs at once, each from its own seq on (a projector's window touches hundreds of runs,
 * each of which it has read up to some seq): one statement for them all (the runs, their journal
 * rows and their activations), not a few each; a round trip costs the projector more CPU than
 * decoding what it brings. Runs that are gone are left out.
 */
export async function readProjectedRuns(
  sql: SqlClient,
  wanted: readonly { runId: string; fromSeq: number }[],
): Promise<Map<string, ProjectedRows>> {
  // A lateral lookup per run (OFFSET 0 keeps the planner from flattening it): as a plain join,
  // the planner's guess of 100 rows for unnest made it hash the whole journal at every window.
  const read = await sql.query<
    Omit<EntryRow, "kind"> &
      Omit<ActivationRow, "kind"> & {
        src: "a" | "j" | "r";
        kind: string;
        namespace: string | null;
        traceparent: string | null;
      }
  >(
    `SELECT 'r' AS src, r.id AS run_id, r.namespace, r.traceparent, NULL::int AS seq, NULL AS kind,
            NULL::bigint AS at, NULL AS callsite, NULL::jsonb AS body, NULL AS committed_at_us,
            NULL::int AS replayed, NULL::int AS attempt, NULL::int AS schedule_to_start_ms,
            NULL AS started_at_us
       FROM rw_runs r WHERE r.id = ANY($1::text[])
     UNION ALL
     SELECT 'j', j.run_id, NULL, NULL, j.seq, j.kind, j.at, j.callsite, j.body, ${us("j.committed_at")},
            NULL, NULL, NULL, NULL
       FROM unnest($1::text[], $2::int[]) AS w(run_id, from_seq)
       CROSS JOIN LATERAL (SELECT * FROM rw_journal j
                            WHERE j.run_id = w.run_id AND j.seq >= w.from_seq OFFSET 0) j
     UNION ALL
     SELECT 'a', a.run_id, NULL, NULL, a.seq, a.kind, NULL, NULL, NULL, ${us("a.committed_at")},
            a.replayed, a.attempt, a.schedule_to_start_ms, ${us("a.started_at")}
       FROM unnest($1::text[], $2::int[]) AS w(run_id, from_seq)
       CROSS JOIN LATERAL (SELECT * FROM rw_activations a
                            WHERE a.run_id = w.run_id AND a.seq >= w.from_seq OFFSET 0) a
     ORDER BY src DESC, run_id, seq`,
    [wanted.map((w) => w.runId), wanted.map((w) => w.fromSeq)],
  );
  const found = new Map<string, ProjectedRows>();
  for (const row of read) {
    if (row.src === "r") {
      found.set(row.run_id, {
        run: {
          runId: row.run_id,
          traceparent: row.traceparent,
          committedUs: new Map(),
          activations: [],
        },
        namespace: row.namespace!,
        rows: [],
      });
      continue;
    }
    const entry = found.get(row.run_id);
    if (entry === undefined) continue;
    if (row.src === "a") {
      entry.run.activations.push(toActivation(row as ActivationRow));
      continue;
    }
    const { seq, kind, at, callsite, body, committed_at_us } = row;
    entry.rows.push({ seq, kind, at, callsite, body, committed_at_us });
    entry.run.committedUs.set(Number(seq), Number(committed_at_us));
  }
  return found;
}

/** A sink's cursor, made at the start of history the first time the sink is seen. */
export async function ensureCursor(sql: SqlClient, sink: string): Promise<bigint> {
  await sql.query(
    "INSERT INTO rw_projection_cursors (sink, below_xid) VALUES ($1, 0) ON CONFLICT DO NOTHING",
    [sink],
  );
  const rows = await sql.query<{ below_xid: string }>(
    "SELECT below_xid::text AS below_xid FROM rw_projection_cursors WHERE sink = $1",
    [sink],
  );
  return BigInt(rows[0]!.below_xid);
}

/**
 * Moves a sink's cursor from `from` to `to` after delivering a window. Only forward and only from
 * where this projector read (two projectors of one sink both deliver, at least once; neither
 * moves the cursor back). Answers whether it moved.
 */
export async function advanceCursor(
  sql: SqlClient,
  sink: string,
  from: bigint,
  to: bigint,
  delivered: number,
): Promise<boolean> {
  const rows = await sql.query(
    `UPDATE rw_projection_cursors SET below_xid = $3, delivered = delivered + $4, updated_at = now()
      WHERE sink = $1 AND below_xid = $2 RETURNING sink`,
    [sink, from.toString(), to.toString(), delivered],
  );
  return rows.length > 0;
}

/**
 * The first row (by transaction id) each sink has not delivered: the transaction its cursor waits
 * on. One probe of the xid index a sink, whatever the journal's size or the backlog: its commit
 * time is the lag a scrape reports. (Not min(committed_at) of every pending row: that reads the
 * whole backlog, and as a lateral join over the cursors, parameterized and never analyzed, it was
 * planned at millions and JIT-compiled at every scrape: 350 ms of Postgres CPU each under W1.)
 */
const OLDEST_PENDING = `(SELECT j.committed_at FROM rw_journal j
   WHERE j.xid >= c.below_xid::text::xid8 ORDER BY j.xid LIMIT 1)`;

/** Each sink's lag: the commit time of the first row it has not delivered (none: caught up). */
export async function readLags(sql: SqlClient): Promise<{ sink: string; oldestPending?: Date }[]> {
  const rows = await sql.query<{ sink: string; oldest: Date | string | null }>(
    `SELECT c.sink, ${OLDEST_PENDING} AS oldest FROM rw_projection_cursors c ORDER BY c.sink`,
  );
  return rows.map((r) => ({
    sink: r.sink,
    ...(r.oldest !== null ? { oldestPending: new Date(r.oldest) } : {}),
  }));
}

/**
 * Every sink's cursor and how far behind it is, with the rows it has not delivered counted (a
 * read of the backlog: `rewind projections`, not a scrape, which reads only `readLags`). Each
 * count is bounded above by the next transaction id, so it plans as a range of the xid index.
 */
export async function listCursors(sql: SqlClient): Promise<ProjectionCursor[]> {
  const rows = await sql.query<{
    sink: string;
    below_xid: string;
    delivered: string;
    updated_at: Date | string;
    oldest: Date | string | null;
  }>(
    `SELECT c.sink, c.below_xid::text AS below_xid, c.delivered::text AS delivered, c.updated_at,
            ${OLDEST_PENDING} AS oldest
       FROM rw_projection_cursors c ORDER BY c.sink`,
  );
  const cursors: ProjectionCursor[] = [];
  for (const r of rows) {
    const pending = await sql.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM rw_journal
        WHERE xid >= $1::text::xid8 AND xid < pg_snapshot_xmax(pg_current_snapshot())`,
      [r.below_xid],
    );
    cursors.push({
      sink: r.sink,
      below: BigInt(r.below_xid),
      delivered: Number(r.delivered),
      updatedAt: new Date(r.updated_at),
      pendingRows: Number(pending[0]!.n),
      ...(r.oldest !== null ? { oldestPending: new Date(r.oldest) } : {}),
    });
  }
  return cursors;
}

/** Runs with journal rows committed since `since`, oldest first (a backfill's selection). */
export async function runsCommittedSince(sql: SqlClient, since: Date): Promise<string[]> {
  const rows = await sql.query<{ run_id: string }>(
    `SELECT run_id FROM rw_journal WHERE committed_at >= $1 GROUP BY run_id ORDER BY min(committed_at), run_id`,
    [since],
  );
  return rows.map((r) => r.run_id);
}
