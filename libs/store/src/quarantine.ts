/**
 * What the store keeps for quarantine: operators' requests about quarantined runs, the reports
 * of their run.quarantined entries, and counts by epoch. Requests live in the run's inbox (kinds
 * `release` and `give-up`, migrations/0003_quarantine.sql) so that the one that acts is consumed
 * in the same commit as the entry it becomes; workers never see them (their inbox reads are for
 * signals and cancels only).
 */
import { RewindError, type Json } from "@rewind/core";
import type { PayloadCodec } from "./codec.js";
import { INLINE_VALUE_LIMIT, encodeValue, openReport, openRow } from "./encoding.js";
import type { SqlClient } from "./sql.js";
import type { RunRecord, RunStatus } from "./store.js";

export type QuarantineAction = "release" | "give-up";

/** An operator's request about a quarantined run, waiting for the quarantine service. */
export interface QuarantineRequest {
  id: number;
  runId: string;
  action: QuarantineAction;
  /**
   * The seq of the run.quarantined entry it answers. A run released, then quarantined again,
   * is not released by a request meant for its first quarantine: that request is moot.
   */
  quarantineSeq: number;
  /** Who asked: the API token's label and its namespace. */
  by: string;
  /** release: the epoch to replay on (default: the run's own). */
  epoch?: number;
  /** give-up: why, recorded in the run's failure. */
  reason?: string;
}

export type NewQuarantineRequest = Omit<QuarantineRequest, "id" | "runId">;

/** A quarantined run, with its latest report and the requests about it not yet acted on. */
export interface QuarantinedRun {
  run: RunRecord;
  /** The seq and time of its latest run.quarantined entry. */
  seq: number;
  at: number;
  report: Json;
  pending: QuarantineRequest[];
}

export interface EpochRunCount {
  epoch: number;
  status: RunStatus;
  runs: number;
}

export interface QuarantineCount {
  epoch: number;
  reason: string;
  runs: number;
}

const REQUEST_KINDS = "('release', 'give-up')";

export async function addQuarantineRequest(
  sql: SqlClient,
  runId: string,
  request: NewQuarantineRequest,
): Promise<number> {
  const payload: Record<string, Json> = {
    quarantineSeq: request.quarantineSeq,
    by: request.by,
  };
  if (request.epoch !== undefined) payload.epoch = request.epoch;
  if (request.reason !== undefined) payload.reason = request.reason;
  const value = encodeValue(payload);
  // Always a row of its own, never a blob: the request is read back with one join.
  if (value.size > INLINE_VALUE_LIMIT)
    throw new RewindError(
      "PAYLOAD_TOO_LARGE",
      `A quarantine request of ${value.size} bytes is too large: keep the reason short`,
    );
  return sql.transaction(async (tx) => {
    await tx.query(
      "INSERT INTO rw_values (ref, body, blob_key, size) VALUES ($1, $2, NULL, $3) ON CONFLICT (ref) DO NOTHING",
      [value.ref, value.canonical, value.size],
    );
    await tx.query(
      "INSERT INTO rw_run_values (run_id, ref) VALUES ($1, $2) ON CONFLICT DO NOTHING",
      [runId, value.ref],
    );
    const rows = await tx.query<{ id: string }>(
      "INSERT INTO rw_inbox (run_id, kind, payload_ref) VALUES ($1, $2, $3) RETURNING id",
      [runId, request.action, value.ref],
    );
    return Number(rows[0]!.id);
  });
}

export async function pendingQuarantineRequests(
  sql: SqlClient,
  limit: number,
  runIds?: readonly string[],
): Promise<QuarantineRequest[]> {
  const rows = await sql.query<{ id: string; run_id: string; kind: string; body: string }>(
    `SELECT i.id, i.run_id, i.kind, v.body FROM rw_inbox i JOIN rw_values v ON v.ref = i.payload_ref
      WHERE i.consumed_seq IS NULL AND i.kind IN ${REQUEST_KINDS}
        AND ($2::text[] IS NULL OR i.run_id = ANY($2))
      ORDER BY i.id LIMIT $1`,
    [limit, runIds ?? null],
  );
  return rows.map((row) => {
    const payload = JSON.parse(row.body) as Omit<NewQuarantineRequest, "action">;
    return {
      id: Number(row.id),
      runId: row.run_id,
      action: row.kind as QuarantineAction,
      ...payload,
    };
  });
}

/**
 * Marks requests that no longer apply (their quarantine is over) as handled, with the run's seq
 * at that moment. No journal entry: nothing happens to the run, so no lease is needed.
 */
export async function dismissQuarantineRequests(
  sql: SqlClient,
  runId: string,
  ids: readonly number[],
  seq: number,
): Promise<void> {
  if (ids.length === 0) return;
  await sql.query(
    `UPDATE rw_inbox SET consumed_seq = $3
      WHERE run_id = $1 AND id = ANY($2) AND consumed_seq IS NULL AND kind IN ${REQUEST_KINDS}`,
    [runId, ids, seq],
  );
}

/** Adds each quarantined run's latest report and pending requests. */
export async function withReports(
  sql: SqlClient,
  runs: readonly RunRecord[],
  codec: PayloadCodec | undefined,
): Promise<QuarantinedRun[]> {
  if (runs.length === 0) return [];
  const ids = runs.map((run) => run.id);
  const entries = await sql.query<{
    run_id: string;
    seq: number;
    at: string;
    body: Record<string, unknown>;
  }>(
    `SELECT DISTINCT ON (run_id) run_id, seq, at, body FROM rw_journal
      WHERE run_id = ANY($1) AND kind = 'run.quarantined' ORDER BY run_id, seq DESC`,
    [ids],
  );
  const latest = new Map(entries.map((entry) => [entry.run_id, entry]));
  const pending = await pendingQuarantineRequests(sql, 10_000, ids);
  return runs.flatMap((run) => {
    const entry = latest.get(run.id);
    if (entry === undefined) return []; // quarantined without a report: not by this schema
    return [
      {
        run,
        seq: entry.seq,
        at: Number(entry.at),
        report: openReport(openRow({ ...entry, callsite: null }).body, codec, run.namespace),
        pending: pending.filter((request) => request.runId === run.id),
      },
    ];
  });
}

/** Quarantined runs by epoch and by the reason their latest report gives. */
export async function quarantineCounts(sql: SqlClient): Promise<QuarantineCount[]> {
  return sql.query<QuarantineCount>(
    `SELECT r.epoch, COALESCE(j.body->'report'->>'reason', j.body->>'reason', 'divergence') AS reason, count(*)::int AS runs
       FROM rw_runs r
       JOIN LATERAL (SELECT body FROM rw_journal
                      WHERE run_id = r.id AND kind = 'run.quarantined'
                      ORDER BY seq DESC LIMIT 1) j ON true
      WHERE r.status = 'quarantined' AND r.ended_at IS NULL
      GROUP BY 1, 2 ORDER BY 1, 2`,
  );
}

/** Runs that have not ended, by epoch and status (of one namespace, or all). */
export async function openRunsByEpoch(
  sql: SqlClient,
  namespace?: string,
): Promise<EpochRunCount[]> {
  return sql.query<EpochRunCount>(
    `SELECT epoch, status, count(*)::int AS runs FROM rw_runs
      WHERE ended_at IS NULL AND ($1::text IS NULL OR namespace = $1)
      GROUP BY epoch, status ORDER BY epoch, status`,
    [namespace ?? null],
  );
}
