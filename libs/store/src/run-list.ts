import { runRowFromJson, toRecord } from "./run-rows.js";
import type { SqlClient } from "./sql.js";
import type { ValueReader } from "./values.js";
import type { ListRunsFilter, RunRecord, RunStatus, RunsQuery } from "./store.js";

/** The most runs one page may hold, whatever the caller asks. */
const MAX_PAGE = 1000;

/**
 * The hashes a script filter means: the script of that hash, or every version of that entry
 * file (each edit of order.ts is another hash). Read first, on their own (rw_scripts' key and
 * its (namespace, entry) index), so the runs are then looked for by hash: with the hashes known
 * when the runs query is planned, a rare script is a range of the (namespace, script_hash, id)
 * index. (An `s.entry = $x` over the join was a filter the planner could only check run by run,
 * along the whole namespace: most of a second for a script with one run in 300,000.)
 */
async function scriptHashes(sql: SqlClient, query: RunsQuery): Promise<string[] | undefined> {
  if (query.script === undefined) return undefined;
  const rows = await sql.query<{ hash: string }>(
    "SELECT hash FROM rw_scripts WHERE namespace = $1 AND (hash = $2 OR entry = $2)",
    [query.namespace, query.script],
  );
  return rows.map((row) => row.hash);
}

/**
 * The WHERE clause of a runs query, with its parameters. Every value is a parameter, never
 * spliced into the text: filters come from tenants. Migration 0013 indexes the columns used.
 */
function where(query: RunsQuery, options: { status: boolean; hashes: string[] | undefined }) {
  const params: unknown[] = [query.namespace];
  const conditions = ["r.namespace = $1"];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  if (options.status && query.status !== undefined) {
    const statuses = typeof query.status === "string" ? [query.status] : [...query.status];
    conditions.push(`r.status = ANY(${param(statuses)}::text[])`);
  }
  if (options.hashes !== undefined)
    conditions.push(`r.script_hash = ANY(${param(options.hashes)}::text[])`);
  if (query.toolset !== undefined) conditions.push(`r.toolset = ${param(query.toolset)}`);
  if (query.epoch !== undefined) conditions.push(`r.epoch = ${param(query.epoch)}`);
  if (query.createdFrom !== undefined)
    conditions.push(`r.created_at >= ${param(query.createdFrom.toISOString())}::timestamptz`);
  if (query.createdTo !== undefined)
    conditions.push(`r.created_at < ${param(query.createdTo.toISOString())}::timestamptz`);
  if (query.parent !== undefined) conditions.push(`r.parent_id = ${param(query.parent)}`);
  if (query.fork !== undefined)
    conditions.push(query.fork ? "r.parent_id IS NOT NULL" : "r.parent_id IS NULL");
  if (query.text !== undefined) {
    const pattern = param(`%${escapeLike(query.text)}%`);
    conditions.push(`(r.id ILIKE ${pattern} OR r.error->>'message' ILIKE ${pattern})`);
  }
  return { conditions, params, param };
}

/** The script's row is joined for its file name: a run shows `order.ts`, not only a hash. */
const FROM =
  "FROM rw_runs r LEFT JOIN rw_scripts s ON s.namespace = r.namespace AND s.hash = r.script_hash";

/**
 * A run's row, its script's file name, and its journal's highest seq (the truth about where a
 * run is), in one round trip: the max is one step down the journal's primary key per run.
 */
const COLUMNS =
  "to_jsonb(r) AS run, s.entry AS script, (SELECT max(j.seq) FROM rw_journal j WHERE j.run_id = r.id) AS last";

type RunAndScript = { run: Record<string, unknown>; script: string | null; last: number | null };

/** One run with its script's file name, in one query. */
export async function getRun(
  sql: SqlClient,
  values: ValueReader,
  id: string,
): Promise<RunRecord | undefined> {
  // Named: read at every answer about a run (a waiting client's result among them), always by
  // primary key, so the plan Postgres keeps is the one it would make each time (0.4 ms saved).
  const { rows } = await sql.execute<RunAndScript>(
    "rw_get_run",
    `SELECT ${COLUMNS} ${FROM} WHERE r.id = $1`,
    [id],
  );
  return (await records(values, rows))[0];
}

export async function listRuns(
  sql: SqlClient,
  values: ValueReader,
  filter: ListRunsFilter,
): Promise<RunRecord[]> {
  const hashes = await scriptHashes(sql, filter);
  if (hashes?.length === 0) return []; // no script of that name or hash: no run of it
  const { conditions, params, param } = where(filter, { status: true, hashes });
  const oldest = filter.order === "oldest";
  if (filter.before !== undefined) conditions.push(`r.id < ${param(filter.before)}`);
  if (filter.after !== undefined) conditions.push(`r.id > ${param(filter.after)}`);
  const limit = param(Math.max(0, Math.min(filter.limit ?? 50, MAX_PAGE)));
  const rows = await sql.query<RunAndScript>(
    `SELECT ${COLUMNS} ${FROM} WHERE ${conditions.join(" AND ")}
     ORDER BY r.id ${oldest ? "ASC" : "DESC"} LIMIT ${limit}`,
    params,
  );
  return records(values, rows);
}

async function records(values: ValueReader, rows: RunAndScript[]): Promise<RunRecord[]> {
  return Promise.all(
    rows.map(async ({ run, script, last }) => {
      const record = await toRecord(runRowFromJson(run), last ?? 1, values);
      if (script !== null) record.script = script;
      return record;
    }),
  );
}

export async function countRuns(
  sql: SqlClient,
  query: RunsQuery,
): Promise<Partial<Record<RunStatus, number>>> {
  const hashes = await scriptHashes(sql, query);
  if (hashes?.length === 0) return {};
  const { conditions, params } = where(query, { status: false, hashes });
  const rows = await sql.query<{ status: RunStatus; runs: string | number }>(
    `SELECT r.status, count(*) AS runs ${FROM} WHERE ${conditions.join(" AND ")} GROUP BY r.status`,
    params,
  );
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.runs)]));
}

/** `%`, `_` and `\` match themselves: the text is looked for as typed. */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
