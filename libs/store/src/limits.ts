import { LIMIT_NAMES, RewindError, type LimitName } from "@rewind/core";
import type { SqlClient } from "./sql.js";
import type { StartLimits, StartLoad } from "./store.js";

/** A namespace's own limits: a number where it set one, null where it takes the default. */
export type NamespaceLimits = Record<LimitName, number | null>;

const COLUMNS: Record<LimitName, string> = {
  runsInFlight: "runs_in_flight",
  startsPerSecond: "starts_per_second",
  journalEntries: "journal_entries",
  journalBytes: "journal_bytes",
  outputBytes: "output_bytes",
  timers: "timers",
};

const LIMIT_MAX = 2 ** 53 - 1;

export async function getLimits(sql: SqlClient, namespace: string): Promise<NamespaceLimits> {
  const rows = await sql.query<Record<string, string | number | null>>(
    `SELECT ${LIMIT_NAMES.map((n) => COLUMNS[n]).join(", ")} FROM rw_namespace_limits WHERE namespace = $1`,
    [namespace],
  );
  const limits = {} as NamespaceLimits;
  for (const name of LIMIT_NAMES) {
    const value = rows[0]?.[COLUMNS[name]];
    limits[name] = value === undefined || value === null ? null : Number(value);
  }
  return limits;
}

/** Sets some of a namespace's limits (null: back to the default); the others are kept. */
export async function setLimits(
  sql: SqlClient,
  namespace: string,
  changes: Partial<NamespaceLimits>,
): Promise<NamespaceLimits> {
  const names = LIMIT_NAMES.filter((n) => changes[n] !== undefined);
  for (const name of names) {
    const value = changes[name];
    if (value !== null && (!Number.isSafeInteger(value) || value! <= 0 || value! > LIMIT_MAX))
      throw new RewindError(
        "INVALID_INPUT",
        `Limit ${name} must be a positive integer, or null for the default; got ${String(value)}`,
      );
  }
  if (names.length > 0) {
    const columns = names.map((n) => COLUMNS[n]);
    await sql.query(
      `INSERT INTO rw_namespace_limits (namespace, ${columns.join(", ")}) VALUES ($1, ${columns.map((_, i) => `$${i + 2}`).join(", ")})
       ON CONFLICT (namespace) DO UPDATE SET ${columns.map((c) => `${c} = EXCLUDED.${c}`).join(", ")}, updated_at = now()`,
      [namespace, ...names.map((n) => changes[n])],
    );
  }
  return getLimits(sql, namespace);
}

/**
 * What a start would count against: the namespace's open runs, and the runs it created in the
 * last second (across every API process, since the rows are the truth). `START_LOAD` is the same
 * count as a statement's CTE ($1: the namespace), for a start that checks and inserts at once.
 */
export const START_LOAD = `
  SELECT (SELECT count(*) FROM rw_runs
           WHERE namespace = $1 AND status IN ('queued', 'running', 'waiting')) AS in_flight,
         (SELECT count(*) FROM rw_runs
           WHERE namespace = $1 AND created_at > now() - interval '1 second') AS last_second`;

export function startLoadOf(row: { in_flight: string | number; last_second: string | number }) {
  return { inFlight: Number(row.in_flight), lastSecond: Number(row.last_second) };
}

export async function startLoad(sql: SqlClient, namespace: string): Promise<StartLoad> {
  const rows = await sql.query<{ in_flight: string | number; last_second: string | number }>(
    START_LOAD,
    [namespace],
  );
  return rows[0] === undefined ? { inFlight: 0, lastSecond: 0 } : startLoadOf(rows[0]);
}

/** Whether a start under `limits` may go in with the namespace's load at `load`. */
export function underLimits(load: StartLoad, limits: StartLimits): boolean {
  return load.inFlight < limits.runsInFlight && load.lastSecond < limits.startsPerSecond;
}
