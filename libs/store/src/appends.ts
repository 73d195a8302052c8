import type { ErrorData } from "@rewind/core";
import { encodeEntry, type EncodedValue, type EntryRow } from "./encoding.js";
import type { SqlClient } from "./sql.js";
import type { AppendOutcome, RunAppend } from "./store.js";
import type { ValueRow } from "./values.js";

const UNIQUE_VIOLATION = "23505";
const PLAIN_KINDS = new Set(["call", "call.result", "call.error", "output"]);

/**
 * The rows of an append that needs nothing but journal rows (no value stored apart, no timer, no
 * inbox item, no end), or undefined.
 */
export function plainStep(append: RunAppend): EntryRow[] | undefined {
  if (append.entries.length === 0 || append.entries.length > 8) return undefined;
  if ((append.inboxConsumed?.length ?? 0) > 0) return undefined;
  if (append.releaseLease === true) return undefined;
  const rows: EntryRow[] = [];
  for (const entry of append.entries) {
    if (!PLAIN_KINDS.has(entry.kind)) return undefined;
    const { row, value } = encodeEntry(entry);
    if (value !== undefined) return undefined;
    rows.push(row);
  }
  return rows;
}

/**
 * One run's plain step as one prepared INSERT: its entries, fenced in the same statement by the
 * lease (owner and token) and by the journal's end (seq afterSeq exists; the (run_id, seq) key
 * refuses afterSeq + 1 if it does too). As fast as a bare INSERT; rw_commit (a plpgsql loop over
 * a jsonb batch) costs half as much again, and stays for everything else.
 */
export async function commitPlainStep(
  sql: SqlClient,
  append: RunAppend,
  rows: readonly EntryRow[],
): Promise<AppendOutcome> {
  const { lease, afterSeq } = append;
  const params: unknown[] = [lease.runId, lease.owner, lease.token, afterSeq];
  const tuples = rows.map((row) => {
    const at = params.push(row.seq, row.kind, row.at, row.callsite, JSON.stringify(row.body));
    return `($${at - 4}::integer, $${at - 3}::text, $${at - 2}::bigint, $${at - 1}::text, $${at}::jsonb)`;
  });
  try {
    const count = await sql.execute(
      `rw_plain_step_${rows.length}`,
      `INSERT INTO rw_journal (run_id, seq, kind, at, callsite, body)
       SELECT $1, e.seq, e.kind, e.at, e.callsite, e.body
         FROM (VALUES ${tuples.join(", ")}) AS e (seq, kind, at, callsite, body)
        WHERE EXISTS (SELECT 1 FROM rw_runs WHERE id = $1 AND lease_owner = $2 AND lease_token = $3)
          AND EXISTS (SELECT 1 FROM rw_journal WHERE run_id = $1 AND seq = $4::integer)`,
      params,
    );
    return count === rows.length ? "ok" : "lease_lost";
  } catch (error) {
    // Another owner appended after the same seq first: this owner's step is refused.
    if ((error as { code?: string }).code === UNIQUE_VIOLATION) return "lease_lost";
    throw error;
  }
}

/**
 * Several runs' plain steps as one INSERT (group commit's usual batch under load): each row is
 * fenced by its own run's lease and journal end, and RETURNING says which runs' rows went in.
 * A run's rows share one fence, so they all go in or none does. If one run's rows break the
 * (run_id, seq) key the whole statement fails, and each run is committed on its own instead.
 */
export async function commitPlainSteps(
  sql: SqlClient,
  steps: readonly { append: RunAppend; rows: readonly EntryRow[] }[],
): Promise<AppendOutcome[]> {
  if (steps.length === 1) return [await commitPlainStep(sql, steps[0]!.append, steps[0]!.rows)];
  const params: unknown[] = [];
  const tuples: string[] = [];
  for (const { append, rows } of steps) {
    const { lease, afterSeq } = append;
    for (const row of rows) {
      const n = params.push(lease.runId, lease.owner, lease.token, afterSeq, row.seq, row.kind);
      params.push(row.at, row.callsite, JSON.stringify(row.body));
      tuples.push(
        `($${n - 5}::text, $${n - 4}::text, $${n - 3}::bigint, $${n - 2}::integer, $${n - 1}::integer, ` +
          `$${n}::text, $${n + 1}::bigint, $${n + 2}::text, $${n + 3}::jsonb)`,
      );
    }
  }
  let written: { run_id: string }[];
  try {
    written = await sql.query<{ run_id: string }>(
      `INSERT INTO rw_journal (run_id, seq, kind, at, callsite, body)
       SELECT e.run_id, e.seq, e.kind, e.at, e.callsite, e.body
         FROM (VALUES ${tuples.join(", ")}) AS e (run_id, owner, token, after_seq, seq, kind, at, callsite, body)
        WHERE EXISTS (SELECT 1 FROM rw_runs r
                       WHERE r.id = e.run_id AND r.lease_owner = e.owner AND r.lease_token = e.token)
          AND EXISTS (SELECT 1 FROM rw_journal j WHERE j.run_id = e.run_id AND j.seq = e.after_seq)
       RETURNING run_id`,
      params,
    );
  } catch (error) {
    if ((error as { code?: string }).code !== UNIQUE_VIOLATION) throw error;
    const outcomes: AppendOutcome[] = [];
    for (const step of steps) outcomes.push(await commitPlainStep(sql, step.append, step.rows));
    return outcomes;
  }
  const count = new Map<string, number>();
  for (const { run_id } of written) count.set(run_id, (count.get(run_id) ?? 0) + 1);
  return steps.map(({ append, rows }) =>
    count.get(append.lease.runId) === rows.length ? "ok" : "lease_lost",
  );
}

/** An append as rw_commit takes it: rows, values stored apart, timers, and what ends the run. */
export async function encodeAppend(
  append: RunAppend,
  prepare: (values: readonly EncodedValue[]) => Promise<ValueRow[]>,
) {
  const rows: EntryRow[] = [];
  const encoded: EncodedValue[] = [];
  const timersSet: { seq: number; due: number }[] = [];
  const timersCleared: number[] = [];
  let ended = false;
  let resultRef: string | undefined;
  let resultJson: string | undefined;
  let error: ErrorData | undefined;
  for (const entry of append.entries) {
    const { row, value, inline } = encodeEntry(entry);
    rows.push(row);
    if (value) encoded.push(value);
    switch (entry.kind) {
      case "timer.set":
        timersSet.push({ seq: entry.seq, due: entry.due });
        break;
      case "timer.cancel":
        timersCleared.push(entry.timerSeq);
        break;
      case "timer.fired":
        timersCleared.push(entry.timerSeq);
        break;
      case "run.completed":
        ended = true;
        if (inline !== undefined) resultJson = inline;
        else resultRef = value!.ref;
        break;
      case "run.failed":
        ended = true;
        error = entry.error;
        break;
      case "run.cancelled":
        ended = true;
        break;
      default:
        break;
    }
  }
  const values = await prepare(encoded);
  return {
    runId: append.lease.runId,
    owner: append.lease.owner,
    token: append.lease.token,
    afterSeq: append.afterSeq,
    status: append.status,
    ended,
    resultRef,
    resultJson,
    error,
    entries: rows,
    values,
    timersSet,
    timersCleared,
    inboxConsumed: append.inboxConsumed ?? [],
    release: append.releaseLease === true,
  };
}
