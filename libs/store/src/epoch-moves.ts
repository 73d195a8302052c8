/**
 * Moving open runs between determinism epochs (migrations/0010_epoch_moves.sql). An operator
 * asks for a check of one namespace's runs of epoch `from` on epoch `to`; a worker of `to` takes
 * it, replays each run on its own runtime, and moves those that match, each in one compare-and-set
 * statement: the run's epoch changes only if its journal still ends at the seq that was checked
 * and the checker still holds its lease, and the same statement records who moved it.
 */
import type { SqlClient } from "./sql.js";
import type { Lease } from "./store.js";

/** What became of one run in a check. */
export type EpochRunVerdict =
  | { runId: string; verdict: "moved" | "would-move"; checkedSeq: number }
  /** Its replay left the journal: it stays on its epoch, for that epoch's workers. */
  | { runId: string; verdict: "diverges"; checkedSeq: number; divergedAt?: number; message: string }
  /** Not checked, or not moved: why (its lease is held, its journal grew, it is quarantined…). */
  | { runId: string; verdict: "skipped"; message: string };

export interface EpochCheckReport {
  /** The worker that replayed the runs, and its runtime. */
  checkedBy: string;
  runtime: string;
  runs: EpochRunVerdict[];
}

export interface EpochCheck {
  id: number;
  namespace: string;
  from: number;
  to: number;
  requestedBy: string;
  /** Only say what would move. */
  dryRun: boolean;
  requestedAt: Date;
  takenBy: string | null;
  finishedAt: Date | null;
  report: EpochCheckReport | null;
}

export interface NewEpochCheck {
  namespace: string;
  from: number;
  to: number;
  requestedBy: string;
  dryRun: boolean;
}

/** One move, as recorded beside the run. */
export interface EpochMove {
  runId: string;
  checkedSeq: number;
  from: number;
  to: number;
  by: string;
  checkId: number | null;
  at: Date;
}

interface CheckRow {
  id: string | number;
  namespace: string;
  from_epoch: number;
  to_epoch: number;
  requested_by: string;
  dry_run: boolean;
  requested_at: Date | string;
  taken_by: string | null;
  finished_at: Date | string | null;
  report: EpochCheckReport | string | null;
}

const toCheck = (row: CheckRow): EpochCheck => ({
  id: Number(row.id),
  namespace: row.namespace,
  from: row.from_epoch,
  to: row.to_epoch,
  requestedBy: row.requested_by,
  dryRun: row.dry_run,
  requestedAt: new Date(row.requested_at),
  takenBy: row.taken_by,
  finishedAt: row.finished_at === null ? null : new Date(row.finished_at),
  report:
    typeof row.report === "string" ? (JSON.parse(row.report) as EpochCheckReport) : row.report,
});

export async function requestEpochCheck(sql: SqlClient, check: NewEpochCheck): Promise<EpochCheck> {
  const rows = await sql.query<CheckRow>(
    `INSERT INTO rw_epoch_checks (namespace, from_epoch, to_epoch, requested_by, dry_run)
     VALUES ($1, $2, $3, $4, $5) RETURNING *`,
    [check.namespace, check.from, check.to, check.requestedBy, check.dryRun],
  );
  return toCheck(rows[0]!);
}

/**
 * Takes the oldest unfinished check onto one of `epochs` that nobody holds, or whose taker has not
 * said it is alive for `staleMs` (it died mid-check: a move it made is recorded, and a run it
 * moved is no longer of `from`, so checking again is harmless).
 */
export async function takeEpochCheck(
  sql: SqlClient,
  owner: string,
  epochs: readonly number[],
  staleMs: number,
): Promise<EpochCheck | undefined> {
  const rows = await sql.query<CheckRow>(
    `UPDATE rw_epoch_checks SET taken_by = $1, taken_at = now()
      WHERE id = (SELECT id FROM rw_epoch_checks
                   WHERE finished_at IS NULL AND to_epoch = ANY($2::integer[])
                     AND (taken_by IS NULL OR taken_at < now() - $3 * interval '1 millisecond')
                   ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING *`,
    [owner, [...epochs], staleMs],
  );
  return rows[0] === undefined ? undefined : toCheck(rows[0]);
}

/** The taker is alive and still at it: nobody else takes the check. */
export async function touchEpochCheck(sql: SqlClient, id: number, owner: string): Promise<void> {
  await sql.query(
    "UPDATE rw_epoch_checks SET taken_at = now() WHERE id = $1 AND taken_by = $2 AND finished_at IS NULL",
    [id, owner],
  );
}

export async function finishEpochCheck(
  sql: SqlClient,
  id: number,
  owner: string,
  report: EpochCheckReport,
): Promise<void> {
  await sql.query(
    `UPDATE rw_epoch_checks SET finished_at = now(), report = $3::jsonb
      WHERE id = $1 AND taken_by = $2 AND finished_at IS NULL`,
    [id, owner, JSON.stringify(report)],
  );
}

/** A check of this namespace (another namespace's is not found). */
export async function getEpochCheck(
  sql: SqlClient,
  namespace: string,
  id: number,
): Promise<EpochCheck | undefined> {
  const rows = await sql.query<CheckRow>(
    "SELECT * FROM rw_epoch_checks WHERE id = $1 AND namespace = $2",
    [id, namespace],
  );
  return rows[0] === undefined ? undefined : toCheck(rows[0]);
}

/** The ids of a namespace's runs of `epoch` that have not ended, oldest first, after `afterId`. */
export async function openRunsOfEpoch(
  sql: SqlClient,
  namespace: string,
  epoch: number,
  limit: number,
  afterId = "",
): Promise<string[]> {
  const rows = await sql.query<{ id: string }>(
    `SELECT id FROM rw_runs WHERE ended_at IS NULL AND epoch = $2 AND namespace = $1 AND id > $3
      ORDER BY id LIMIT $4`,
    [namespace, epoch, afterId, limit],
  );
  return rows.map((row) => row.id);
}

/**
 * Moves the run to `to` if it is still of `from`, has not ended, its journal still ends at
 * `checkedSeq` and `lease` is still the live lease on it; records the move in the same statement.
 * "changed" when any of that no longer holds: the run stays where it is.
 */
export async function moveRunEpoch(
  sql: SqlClient,
  lease: Lease,
  move: { from: number; to: number; checkedSeq: number; by: string; checkId?: number },
): Promise<"ok" | "changed"> {
  const rows = await sql.query<{ run_id: string }>(
    `WITH moved AS (
       UPDATE rw_runs SET epoch = $3, updated_at = now()
        WHERE id = $1 AND epoch = $2 AND ended_at IS NULL
          AND lease_owner = $5 AND lease_token = $6 AND lease_expires_at > now()
          AND (SELECT max(seq) FROM rw_journal WHERE run_id = $1) = $4
        RETURNING id)
     INSERT INTO rw_epoch_moves (run_id, checked_seq, from_epoch, to_epoch, moved_by, check_id)
     SELECT id, $4, $2, $3, $7, $8 FROM moved RETURNING run_id`,
    [
      lease.runId,
      move.from,
      move.to,
      move.checkedSeq,
      lease.owner,
      lease.token,
      move.by,
      move.checkId ?? null,
    ],
  );
  return rows.length === 1 ? "ok" : "changed";
}

/** The moves of a run, oldest first. */
export async function epochMoves(sql: SqlClient, runId: string): Promise<EpochMove[]> {
  const rows = await sql.query<{
    run_id: string;
    checked_seq: number;
    from_epoch: number;
    to_epoch: number;
    moved_by: string;
    check_id: string | number | null;
    moved_at: Date | string;
  }>("SELECT * FROM rw_epoch_moves WHERE run_id = $1 ORDER BY moved_at, checked_seq", [runId]);
  return rows.map((row) => ({
    runId: row.run_id,
    checkedSeq: row.checked_seq,
    from: row.from_epoch,
    to: row.to_epoch,
    by: row.moved_by,
    checkId: row.check_id === null ? null : Number(row.check_id),
    at: new Date(row.moved_at),
  }));
}
