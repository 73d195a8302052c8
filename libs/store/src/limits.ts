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
 * last second (across every API process, since the rows are the truth). `startLoadSql` is the
 * same count as a statement's CTE, for a start that checks and inserts at once; the open runs
 * only when `countInFlight` (a boolean parameter) is true, else in_flight is null (InFlightCounts).
 */
export function startLoadSql(namespace: string, countInFlight: string): string {
  return `
  SELECT CASE WHEN ${countInFlight} THEN
           (SELECT count(*) FROM rw_runs
             WHERE namespace = ${namespace} AND status IN ('queued', 'running', 'waiting')) END AS in_flight,
         (SELECT count(*) FROM rw_runs
           WHERE namespace = ${namespace} AND created_at > now() - interval '1 second') AS last_second`;
}

export interface StartLoadRow {
  in_flight: string | number | null;
  last_second: string | number;
}

/** The load a statement read; `lastCount` stands for in_flight where it was not counted. */
export function startLoadOf(row: StartLoadRow, lastCount = 0): StartLoad {
  return {
    inFlight: row.in_flight === null ? lastCount : Number(row.in_flight),
    lastSecond: Number(row.last_second),
  };
}

export async function startLoad(sql: SqlClient, namespace: string): Promise<StartLoad> {
  const rows = await sql.query<StartLoadRow>(startLoadSql("$1", "true"), [namespace]);
  return rows[0] === undefined ? { inFlight: 0, lastSecond: 0 } : startLoadOf(rows[0]);
}

/**
 * When a start must count its namespace's open runs. The count reads every open run's row: in
 * W1 (2,000 runs open) 1.6 ms of Postgres a start, the costliest statement of the cluster.
 * Most starts need not: runs in flight grow only by starts, and a namespace starts at most
 * `startsPerSecond` runs in any second (counted by every start, a count that limit bounds).
 * So while this process counted less than a second ago, and found the runs in flight more than twice that many below their
 * limit, no start of that second can reach it, and the count is skipped. Near the limit (or
 * with a limit of a few runs, as tests set) every start counts. A start with no limits never
 * counts: none can be reached.
 */
export class InFlightCounts {
  private readonly counted = new Map<string, { inFlight: number; at: number }>();

  mustCount(namespace: string, limits: StartLimits | undefined, now = Date.now()): boolean {
    if (limits === undefined) return false;
    const last = this.counted.get(namespace);
    return (
      last === undefined ||
      now - last.at >= 1_000 ||
      last.inFlight + 2 * limits.startsPerSecond >= limits.runsInFlight
    );
  }

  /** The last count, standing for a start's in_flight where it was skipped. */
  last(namespace: string): number {
    return this.counted.get(namespace)?.inFlight ?? 0;
  }

  record(namespace: string, inFlight: number, now = Date.now()): void {
    this.counted.delete(namespace);
    if (this.counted.size >= 10_000) this.counted.delete(this.counted.keys().next().value!);
    this.counted.set(namespace, { inFlight, at: now });
  }
}

/** Whether a start under `limits` may go in with the namespace's load at `load`. */
export function underLimits(load: StartLoad, limits: StartLimits): boolean {
  return load.inFlight < limits.runsInFlight && load.lastSecond < limits.startsPerSecond;
}
