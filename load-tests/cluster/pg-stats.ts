/**
 * --pg-stats: Postgres's own account of a workload, from pg_stat_statements (on a server that
 * loads it: shared_preload_libraries, which the bench never changes; a scratch cluster of one's
 * own, for example). Two snapshots of the bench database's statements around a workload give,
 * per journaled call, how often each statement ran and the time Postgres spent planning and
 * executing it: where the Postgres CPU per call that the workload prints goes.
 */
import type pg from "pg";

interface Statement {
  query: string;
  toplevel: boolean;
  calls: number;
  ms: number;
  rows: number;
  /** Of `ms`, JIT compilation (a plan estimated costly enough: jit_above_cost). */
  jitMs: number;
}

export type PgStats = Map<string, Statement>;

/** The extension in the bench database, or why it cannot be used. */
export async function enablePgStats(db: pg.Pool): Promise<void> {
  try {
    await db.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    await db.query("SELECT 1 FROM pg_stat_statements LIMIT 1");
  } catch (error) {
    throw new Error(
      `--pg-stats needs a server that loads pg_stat_statements (shared_preload_libraries); ` +
        `point TEST_DATABASE_URL at a scratch cluster that does: ${(error as Error).message}`,
    );
  }
}

/** The bench database's statements so far. */
export async function snapshotPgStats(db: pg.Pool): Promise<PgStats> {
  const { rows } = await db.query<{
    id: string;
    query: string;
    toplevel: boolean;
    calls: string;
    ms: number;
    rows: string;
    jit_ms: number;
  }>(
    `SELECT queryid::text || ':' || toplevel::text AS id, query, toplevel, calls::text,
            total_exec_time + total_plan_time AS ms, rows::text,
            jit_generation_time + jit_inlining_time + jit_optimization_time + jit_emission_time AS jit_ms
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  return new Map(
    rows.map((r) => [
      r.id,
      {
        query: r.query,
        toplevel: r.toplevel,
        calls: Number(r.calls),
        ms: Number(r.ms),
        rows: Number(r.rows),
        jitMs: Number(r.jit_ms),
      },
    ]),
  );
}

/** Prints each top-level statement's calls and time per `unit`, the costliest first. */
export function printPgStats(
  before: PgStats,
  after: PgStats,
  units: number,
  unit: string,
  top = 14,
) {
  const diffs: (Statement & { perUnitUs: number })[] = [];
  for (const [id, s] of after) {
    const was = before.get(id);
    const calls = s.calls - (was?.calls ?? 0);
    if (calls <= 0) continue;
    const ms = s.ms - (was?.ms ?? 0);
    diffs.push({
      ...s,
      calls,
      ms,
      rows: s.rows - (was?.rows ?? 0),
      jitMs: s.jitMs - (was?.jitMs ?? 0),
      perUnitUs: (ms * 1000) / units,
    });
  }
  const level = (toplevel: boolean) => diffs.filter((d) => d.toplevel === toplevel);
  const sum = (list: typeof diffs, key: "calls" | "perUnitUs") =>
    list.reduce((s, d) => s + (key === "calls" ? d.calls / units : d.perUnitUs), 0);
  const outer = level(true);
  console.log(
    `  pg_stat_statements (--pg-stats): ${sum(outer, "calls").toFixed(2)} statements and ` +
      `${sum(outer, "perUnitUs").toFixed(0)} µs of planning and execution a ${unit}`,
  );
  for (const d of outer.sort((a, b) => b.perUnitUs - a.perUnitUs).slice(0, top))
    console.log(
      `    ${d.perUnitUs.toFixed(1).padStart(7)} µs ${(d.calls / units).toFixed(3).padStart(7)}×  ` +
        `${(d.ms / d.calls).toFixed(3)} ms each${d.jitMs > 0 ? ` (JIT ${(d.jitMs / d.calls).toFixed(1)} ms)` : ""}, ` +
        `${(d.rows / d.calls).toFixed(1)} rows  ` +
        d.query.replace(/\s+/g, " ").trim().slice(0, 110),
    );
}
