import type { ErrorData } from "@rewind/core";
import {
  encodeEntry,
  holdsUnstorable,
  type EncodedValue,
  type EntryRow,
  type Seal,
} from "./encoding.js";
import type { SqlClient } from "./sql.js";
import type { AppendOutcome, RunAppend } from "./store.js";
import type { ValueRow } from "./values.js";

const UNIQUE_VIOLATION = "23505";
const PLAIN_KINDS = new Set(["call", "call.result", "call.error", "output"]);

/**
 * The rows of an append that needs nothing but journal rows (no value stored apart, no timer, no
 * inbox item, no end), or undefined.
 */
export function plainStep(append: RunAppend, seal: Seal): EntryRow[] | undefined {
  if (append.entries.length === 0 || append.entries.length > 8) return undefined;
  if ((append.inboxConsumed?.length ?? 0) > 0) return undefined;
  if (append.releaseLease === true) return undefined;
  if (append.activation !== undefined || append.claim !== undefined) return undefined;
  const rows: EntryRow[] = [];
  for (const entry of append.entries) {
    if (!PLAIN_KINDS.has(entry.kind)) return undefined;
    const { row, value } = encodeEntry(entry, seal);
    if (value !== undefined) return undefined;
    rows.push(row);
  }
  return rows;
}

/**
 * Plain steps of many runs as one prepared INSERT (group commit's usual batch under load).
 * Each run is fenced once, in the same statement: by its lease (owner and token) and by its
 * journal's end (seq afterSeq exists; the (run_id, seq) key refuses afterSeq + 1 if it does too).
 * The fences are scalar subqueries, so each is an index lookup whatever the table statistics say
 * (as EXISTS, a stale estimate turned them into a hash join over every run). Steps and rows travel
 * as two JSON documents: the statement's text never changes, so Postgres parses and plans it once
 * per connection. RETURNING says which runs' rows went in: a run's rows share one fence, so they
 * all go in or none does. rw_commit (a plpgsql loop over a jsonb batch) stays for everything else.
 */
const PLAIN_STEPS = `
  WITH fenced AS (
    SELECT s.run_id
      FROM jsonb_to_recordset($1::jsonb) AS s (run_id text, owner text, token bigint, after_seq integer)
     WHERE (SELECT r.lease_token FROM rw_runs r WHERE r.id = s.run_id AND r.lease_owner = s.owner) = s.token
       AND (SELECT true FROM rw_journal j WHERE j.run_id = s.run_id AND j.seq = s.after_seq))
  INSERT INTO rw_journal (run_id, seq, kind, at, callsite, body)
  SELECT e.run_id, e.seq, e.kind, e.at, e.callsite, e.body
    FROM jsonb_to_recordset($2::jsonb) AS e (run_id text, seq integer, kind text, at bigint, callsite text, body jsonb)
   WHERE e.run_id IN (SELECT run_id FROM fenced)
  RETURNING run_id`;

export async function commitPlainSteps(
  sql: SqlClient,
  steps: readonly { append: RunAppend; rows: readonly EntryRow[] }[],
): Promise<AppendOutcome[]> {
  if (steps.length === 1) return [await commitPlainStep(sql, steps[0]!.append, steps[0]!.rows)];
  const fences = steps.map(({ append: { lease, afterSeq } }) => ({
    run_id: lease.runId,
    owner: lease.owner,
    token: lease.token,
    after_seq: afterSeq,
  }));
  const rows = steps.flatMap(({ append, rows }) =>
    rows.map((row) => ({ run_id: append.lease.runId, ...row })),
  );
  let written: { run_id: string }[];
  try {
    written = (
      await sql.execute<{ run_id: string }>("rw_plain_steps", PLAIN_STEPS, [
        JSON.stringify(fences),
        JSON.stringify(rows),
      ])
    ).rows;
  } catch (error) {
    // Another owner appended after the same seq first: that run's step is refused. The key
    // failed the whole statement, so each run goes in on its own.
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

const plainStepStatements = new Map<number, string>();

/** The statement of a plain step of `n` rows: its rows as VALUES, its fence as two lookups. */
function plainStepStatement(n: number): string {
  let text = plainStepStatements.get(n);
  if (text === undefined) {
    const tuples = Array.from({ length: n }, (_, i) => {
      const at = 5 + i * 5;
      return `($${at}::integer, $${at + 1}::text, $${at + 2}::bigint, $${at + 3}::text, $${at + 4}::jsonb)`;
    });
    text = `INSERT INTO rw_journal (run_id, seq, kind, at, callsite, body)
       SELECT $1, e.seq, e.kind, e.at, e.callsite, e.body
         FROM (VALUES ${tuples.join(", ")}) AS e (seq, kind, at, callsite, body)
        WHERE EXISTS (SELECT 1 FROM rw_runs WHERE id = $1 AND lease_owner = $2 AND lease_token = $3)
          AND EXISTS (SELECT 1 FROM rw_journal WHERE run_id = $1 AND seq = $4::integer)`;
    plainStepStatements.set(n, text); // n is at most 8 (see plainStep)
  }
  return text;
}

/**
 * One run's plain step, the hot path of a run on an idle worker: a statement per row count, its
 * rows as VALUES and its fence as two one-time index lookups. About 10% under the batch form for
 * a single run, whose latency is one tool call's round trip.
 */
async function commitPlainStep(
  sql: SqlClient,
  append: RunAppend,
  rows: readonly EntryRow[],
): Promise<AppendOutcome> {
  const { lease, afterSeq } = append;
  const params: unknown[] = [lease.runId, lease.owner, lease.token, afterSeq];
  for (const row of rows)
    params.push(row.seq, row.kind, row.at, row.callsite, JSON.stringify(row.body));
  try {
    const { count } = await sql.execute(
      `rw_plain_step_${rows.length}`,
      plainStepStatement(rows.length),
      params,
    );
    return count === rows.length ? "ok" : "lease_lost";
  } catch (error) {
    // Another owner appended after the same seq first: this owner's step is refused.
    if ((error as { code?: string }).code === UNIQUE_VIOLATION) return "lease_lost";
    throw error;
  }
}

/** The last instant a JavaScript Date can name: no timer is due later (docs/timers.md). */
const LAST_DUE_MS = 8.64e15;

/** An append as rw_commit takes it: rows, values stored apart, timers, and what ends the run. */
export async function encodeAppend(
  append: RunAppend,
  prepare: (values: readonly EncodedValue[]) => Promise<ValueRow[]>,
  seal: Seal,
) {
  const rows: EntryRow[] = [];
  const encoded: EncodedValue[] = [];
  const timersSet: { seq: number; due: number }[] = [];
  const timersCleared: number[] = [];
  let ended = false;
  let resultRef: string | undefined;
  let resultJson: string | undefined;
  let error: ErrorData | { errorJson: string; code?: string } | undefined;
  for (const entry of append.entries) {
    const { row, value, inline } = encodeEntry(entry, seal);
    rows.push(row);
    if (value) encoded.push(value);
    switch (entry.kind) {
      case "timer.set":
        // The row's due_at is a bigint: a due past the last date (an epoch-1 journal may hold
        // 1e308) is kept as that date, never fires sooner, and never fails the commit.
        timersSet.push({ seq: entry.seq, due: Math.min(entry.due, LAST_DUE_MS) });
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
        // The run's row keeps a copy of the error (a jsonb column): one holding text Postgres
        // cannot store (U+0000, a lone surrogate) is kept as JSON text, as its journal row is.
        error = holdsUnstorable(entry.error)
          ? { errorJson: JSON.stringify(entry.error), code: entry.error.code }
          : entry.error;
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
    ...(append.activation !== undefined ? { activation: append.activation } : {}),
    ...(append.claim !== undefined ? { claim: encodeClaim(append.claim, seal) } : {}),
  };
}

/** A claim as rw_commit checks it: the start the worker ran, as its row would be stored. */
function encodeClaim({ started, ttlMs }: NonNullable<RunAppend["claim"]>, seal: Seal) {
  const { row } = encodeEntry(started, seal);
  return { epoch: started.epoch, ttlMs, at: row.at, body: row.body };
}
