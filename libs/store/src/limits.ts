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
 * A start's admission, as a statement's CTE (one row: in_flight, last_second, admitted): the
 * function rw_admit_start (migrations/0019) estimates the namespace's starts in the last second
 * from its start counters (one row per connection, so every API process sees the same figures),
 * counts its open runs when they could reach `runsInFlight` (`last`: InFlightCounts.bound, null
 * for none recent), and counts the start if it admits it. A statement that fails after it takes
 * the count back with it. The parameters are SQL expressions; null limits admit every start.
 */
export function admitStartSql(
  namespace: string,
  params: { last: string; runsInFlight: string; startsPerSecond: string },
): string {
  return `SELECT in_flight, last_second, admitted
            FROM rw_admit_start(${namespace}, ${params.last}, ${params.runsInFlight}, ${params.startsPerSecond})`;
}

export interface AdmissionRow {
  in_flight: string | number | null;
  last_second: string | number;
  admitted: boolean;
}

/** The load an admission read; `lastCount` stands for in_flight where it was not counted. */
export function startLoadOf(row: AdmissionRow, lastCount = 0): StartLoad {
  return {
    inFlight: row.in_flight === null ? lastCount : Number(row.in_flight),
    lastSecond: Number(row.last_second),
  };
}

/**
 * Whether a start must count its namespace's open runs. The count reads every open run's row: in
 * W1 (2,000 runs open) about 0.4 ms of Postgres a start. Most starts need not: runs in flight grow
 * only by starts, and every run started since this process last counted, if that was less than
 * half a second ago, is in the namespace's start counters of this second and the one before,
 * which every start reads anyway (for `startsPerSecond`). So the last count plus those starts
 * bound the runs in flight now, and a start counts them only when that bound reaches
 * `runsInFlight`: at the edge of the limit (a limit of a few runs, as tests set) every start
 * counts, far from it only the first start of each half second. The half second leaves room for
 * a start that was in flight when the count was made, and for the API's clock against Postgres's.
 */
export class InFlightCounts {
  private readonly counted = new Map<string, { inFlight: number; at: number }>();

  /** The count to bound a start's by; null: none recent, the start counts. */
  bound(namespace: string, limits: StartLimits | undefined, now = Date.now()): number | null {
    if (limits === undefined) return 0; // no limit to reach: never counted
    const last = this.counted.get(namespace);
    return last === undefined || now - last.at >= COUNT_FRESH_MS ? null : last.inFlight;
  }

  /** The last count, standing for a start's in_flight where it was skipped. */
  last(namespace: string): number {
    return this.counted.get(namespace)?.inFlight ?? 0;
  }

  /** A count of `inFlight` by a statement sent `at` (ms): runs started after are in its bound. */
  record(namespace: string, inFlight: number, at: number): void {
    this.counted.delete(namespace);
    if (this.counted.size >= 10_000) this.counted.delete(this.counted.keys().next().value!);
    this.counted.set(namespace, { inFlight, at });
  }
}

/** How long a count of open runs bounds the starts after it (InFlightCounts). */
const COUNT_FRESH_MS = 500;
