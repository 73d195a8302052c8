import type { Json, JournalEntry } from "@rewind/core";
import { decodeEntry, refOf, type EntryRow } from "./encoding.js";
import { runRowFromJson, toRecord } from "./run-rows.js";
import type { SqlClient } from "./sql.js";
import type { ValueReader } from "./values.js";
import type { Lease, LoadedRun, RunRecord } from "./store.js";

export interface LeaseOptions {
  /** Take it whatever its state: for a process that knows every other owner is gone. */
  steal?: boolean;
  /** Only if the run's epoch is one of these: a worker never touches runs it cannot replay. */
  epochs?: readonly number[];
}

/**
 * Takes run $1's lease for owner $2 for $3 ms if it is free, expired or already $2's ($4: steal),
 * and the run is of one of the epochs $5 (null: any). Every lease gets a new token: the fence
 * that refuses a previous holder's appends. A queued run is now running.
 *
 * A cold load counts as an attempt; the count starts again at 1 when the journal grew since the
 * last one (progress), so commits never touch the run row to say so (migration 0005).
 */
const TAKE_LEASE = `
  UPDATE rw_runs SET lease_owner = $2, lease_token = lease_token + 1,
         lease_expires_at = now() + $3 * interval '1 millisecond',
         status = CASE WHEN status = 'queued' THEN 'running' ELSE status END,
         attempts = CASE WHEN journal.last_seq > attempt_seq THEN 1 ELSE attempts + 1 END,
         attempt_seq = journal.last_seq
    FROM (SELECT max(seq) AS last_seq FROM rw_journal WHERE run_id = $1) AS journal
   WHERE id = $1 AND ended_at IS NULL
     AND ($4 OR lease_owner IS NULL OR lease_owner = $2 OR lease_expires_at < now())
     AND ($5::integer[] IS NULL OR epoch + 0 = ANY($5))`;

const params = (runId: string, owner: string, ttlMs: number, options: LeaseOptions) => [
  runId,
  owner,
  ttlMs,
  options.steal === true,
  options.epochs ?? null,
];

export async function acquire(
  sql: SqlClient,
  runId: string,
  owner: string,
  ttlMs: number,
  options: LeaseOptions,
): Promise<Lease | undefined> {
  const rows = await sql.query<{
    token: string;
    last_seq: number;
    attempts: number;
    namespace: string;
  }>(
    `${TAKE_LEASE}
     RETURNING lease_token AS token, attempts, journal.last_seq, namespace`,
    params(runId, owner, ttlMs, options),
  );
  const row = rows[0];
  return row === undefined
    ? undefined
    : {
        runId,
        owner,
        token: Number(row.token),
        lastSeq: row.last_seq,
        attempts: row.attempts,
        namespace: row.namespace,
      };
}

/** The lease and, in the same round trip, the run, its journal and its pending inbox. */
export async function load(
  sql: SqlClient,
  reader: ValueReader,
  runId: string,
  owner: string,
  ttlMs: number,
  options: LeaseOptions,
): Promise<LoadedRun | undefined> {
  // Prepared once per connection: every cold load (a new run's first activation) sends it.
  const { rows } = await sql.execute<{
    run: Record<string, unknown>;
    journal: EntryRow[];
    inbox: { id: number; kind: "signal" | "cancel"; name: string | null; payload_ref: string }[];
  }>(
    "rw_load_run",
    `WITH run AS (${TAKE_LEASE} RETURNING rw_runs.*)
     SELECT to_jsonb(run) AS run,
            (SELECT coalesce(jsonb_agg(jsonb_build_object('seq', j.seq, 'kind', j.kind, 'at', j.at,
                      'callsite', j.callsite, 'body', j.body) ORDER BY j.seq), '[]')
               FROM rw_journal j WHERE j.run_id = $1) AS journal,
            (SELECT coalesce(jsonb_agg(jsonb_build_object('id', i.id, 'kind', i.kind, 'name', i.name,
                      'payload_ref', i.payload_ref) ORDER BY i.id), '[]')
               FROM rw_inbox i
              WHERE i.run_id = $1 AND i.consumed_seq IS NULL AND i.kind IN ('signal', 'cancel')) AS inbox
       FROM run`,
    params(runId, owner, ttlMs, options),
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  const refs = [
    ...row.journal.map(refOf).filter((ref): ref is string => ref !== undefined),
    ...row.inbox.map((item) => item.payload_ref),
  ];
  const run = runRowFromJson(row.run);
  let values: Map<string, Json>;
  let journal: JournalEntry[];
  let record: RunRecord;
  try {
    values = await reader.load([...new Set(refs)], run.namespace);
    journal = row.journal.map((entry) =>
      decodeEntry(entry, (ref) => values.get(ref) as Json, reader.codec, run.namespace),
    );
    record = await toRecord(run, journal.at(-1)?.seq ?? 1, reader);
  } catch (error) {
    // A value this process cannot open (a payload codec key it lacks): the run is not at fault.
    // Hand the lease back at once, and the attempt with it, so a process that has the key takes
    // the run (or this one, once the key is set) and the crash-loop count is left as it was.
    await sql.query(
      `UPDATE rw_runs SET lease_owner = NULL, lease_expires_at = NULL, attempts = greatest(attempts - 1, 0)
        WHERE id = $1 AND lease_owner = $2 AND lease_token = $3`,
      [runId, owner, run.leaseToken],
    );
    throw error;
  }
  const lastSeq = journal.at(-1)?.seq ?? 1;
  return {
    lease: {
      runId,
      owner,
      token: run.leaseToken,
      lastSeq,
      attempts: run.attempts,
      namespace: run.namespace,
      deaths: { count: run.deaths, seq: run.deathSeq, cause: run.deathCause },
    },
    record,
    journal,
    inbox: row.inbox.map((item) => ({
      id: Number(item.id),
      runId,
      kind: item.kind,
      name: item.name,
      payload: values.get(item.payload_ref) ?? null,
    })),
  };
}

export async function renew(
  sql: SqlClient,
  owner: string,
  runIds: readonly string[],
  ttlMs: number,
): Promise<void> {
  if (runIds.length === 0) return;
  await sql.query(
    "UPDATE rw_runs SET lease_expires_at = now() + $3 * interval '1 millisecond' WHERE id = ANY($1) AND lease_owner = $2",
    [runIds, owner, ttlMs],
  );
}

/** Hands the run back: its attempts count restarts. */
export async function release(sql: SqlClient, lease: Lease): Promise<void> {
  await sql.query(
    "UPDATE rw_runs SET lease_owner = NULL, lease_expires_at = NULL, attempts = 0 WHERE id = $1 AND lease_owner = $2 AND lease_token = $3",
    [lease.runId, lease.owner, lease.token],
  );
}

export async function clearAttempts(sql: SqlClient, lease: Lease): Promise<void> {
  await sql.query(
    "UPDATE rw_runs SET attempts = 0 WHERE id = $1 AND lease_owner = $2 AND lease_token = $3",
    [lease.runId, lease.owner, lease.token],
  );
}

/**
 * A death of the run's sandbox process while it executed, at journal end $4 (migration 0007):
 * counted again at the same seq, from 1 at a later one. Fenced like an append, so a stale owner
 * cannot charge a run that moved on.
 */
export async function recordDeath(
  sql: SqlClient,
  lease: Lease,
  seq: number,
  cause: string,
): Promise<number> {
  const rows = await sql.query<{ deaths: number }>(
    `UPDATE rw_runs SET deaths = CASE WHEN $4 > death_seq THEN 1 ELSE deaths + 1 END,
            death_seq = greatest(death_seq, $4), death_cause = $5
      WHERE id = $1 AND lease_owner = $2 AND lease_token = $3
     RETURNING deaths`,
    [lease.runId, lease.owner, lease.token, seq, cause],
  );
  return rows[0]?.deaths ?? 0;
}
