/**
 * The hot statements prepared once per connection keep index plans as the tables grow from empty
 * (issue 18). Postgres caches a prepared statement's generic plan after five executions and makes
 * it again only when the tables are analyzed: a plan chosen while they held a few rows (a new
 * database's first starts) is the one used once they hold tens of thousands, until autovacuum
 * happens to analyze them. A start statement once kept reading every run of its namespace that
 * way, 3 to 4 ms a start under W1. Here the statements are run on a new database, the tables then
 * grow with autovacuum off, and each statement's cached plan, and the plan the open runs' count
 * gets inside rw_admit_start, must still read by index.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { FolderBlobStore, SqlStore, migrate, type SqlClient } from "../src/index.js";
import { postgresClient } from "../src/sql.js";
import { createTestDatabase } from "../src/testing.js";

const GROWN_RUNS = 30_000;
const LIMITS = { runsInFlight: 1_000_000, startsPerSecond: 1_000_000 };

let database: Awaited<ReturnType<typeof createTestDatabase>>;
/** One connection: the statements it prepared are the ones explained. */
let sql: SqlClient;
let store: SqlStore;
/** A session of its own for rw_admit_start, whose plans are cached per session too. */
let session: pg.Client;
let blobDir = "";

function started(runId: string) {
  return {
    seq: 1,
    kind: "run.started" as const,
    at: Date.now(),
    runId,
    scriptHash: "sha256:plans",
    input: { n: 1 },
    seed: "seed",
    epoch: 2,
    toolset: "shop",
    namespace: "acme",
  };
}

beforeAll(async () => {
  database = await createTestDatabase("rewind_prepared_plans");
  sql = postgresClient(database.url, 1);
  await migrate(sql);
  // Nothing may analyze the tables behind the test's back: the plans must hold without it.
  for (const table of ["rw_runs", "rw_journal", "rw_scripts"])
    await sql.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
  await sql.query(`
    INSERT INTO rw_namespaces (name) VALUES ('acme');
    INSERT INTO rw_scripts (namespace, hash, entry, code, source_map)
      VALUES ('acme', 'sha256:plans', 'plans.ts', '', '')`);
  blobDir = mkdtempSync(path.join(tmpdir(), "rewind-plans-blobs-"));
  store = new SqlStore(sql, new FolderBlobStore(blobDir));
  session = new pg.Client({ connectionString: database.url });
  await session.connect();

  // A new database's first moments: each statement run more than five times, on a few rows.
  for (let i = 0; i < 8; i++) {
    const runId = `run_first_${i}`;
    expect(
      await store.createRun({ started: started(runId), ttlMs: 60_000, limits: LIMITS }),
    ).toEqual({ created: true, inClear: true });
    expect((await store.getRun(runId))?.id).toBe(runId);
    expect((await store.readJournalFollowing(runId, 1))?.entries).toHaveLength(1);
    await session.query("SELECT * FROM rw_admit_start('acme', NULL, NULL, NULL)");
  }

  // Then the tables grow, half the runs still open, and nothing analyzes them.
  await sql.query(
    `INSERT INTO rw_runs (id, namespace, script_hash, toolset, epoch, status, ttl_ms)
       SELECT 'run_' || lpad(g::text, 6, '0'), 'acme', 'sha256:plans', 'shop', 2,
              CASE WHEN g % 2 = 0 THEN 'queued' ELSE 'completed' END, 60000
         FROM generate_series(1, $1::int) g`,
    [GROWN_RUNS],
  );
  await sql.query(
    `INSERT INTO rw_journal (run_id, seq, kind, at, callsite, body)
       SELECT 'run_' || lpad(g::text, 6, '0'), s, 'call', 0, NULL, '{}'
         FROM generate_series(1, $1::int) g, generate_series(1, 11) s`,
    [GROWN_RUNS],
  );
}, 120_000);

afterAll(async () => {
  await session?.end();
  await store?.close();
  await database?.drop();
  if (blobDir !== "") rmSync(blobDir, { recursive: true, force: true });
});

/** The plan the connection's cached statement `name` uses now, as JSON text. */
async function cachedPlan(name: string, params: string): Promise<string> {
  const rows = await sql.query<{ "QUERY PLAN": unknown }>(
    `EXPLAIN (FORMAT JSON) EXECUTE ${name}(${params})`,
  );
  return JSON.stringify(rows[0]!["QUERY PLAN"]);
}

it("keeps reading a run and its journal by primary key", async () => {
  for (const plan of [
    await cachedPlan("rw_get_run", "'run_000002'"),
    await cachedPlan("rw_read_journal_following", "'run_000002', 3"),
  ]) {
    expect(plan).not.toContain("Seq Scan");
    expect(plan).toContain('"Index Name":"rw_runs_pkey"');
    expect(plan).toContain('"Index Name":"rw_journal_pkey"');
  }
});

it("prepares the start statement, whose inserts scan nothing", async () => {
  const plan = await cachedPlan(
    "rw_create_run",
    "'run_x', 'acme', 'sha256:plans', 'shop', 2, NULL, NULL, 60000, 'run.started', 0, '{}', NULL, NULL, 1000000, 1000000",
  );
  expect(plan).toContain("rw_admit_start");
  expect(plan).not.toContain("Seq Scan");
});

it("plans the count of open runs at each call, with the table as it is; the counters by key", async () => {
  const plans: string[] = [];
  const heard = (notice: { message?: string }) => plans.push(notice.message ?? "");
  session.on("notice", heard);
  try {
    await session.query(`LOAD 'auto_explain'`);
    await session.query(`SET auto_explain.log_min_duration = 0`);
    await session.query(`SET auto_explain.log_nested_statements = on`);
    await session.query(`SET client_min_messages = log`);
    const [load] = (await session.query("SELECT * FROM rw_admit_start('acme', NULL, NULL, NULL)"))
      .rows;
    expect(load).toEqual({
      in_flight: String(GROWN_RUNS / 2 + 8),
      last_second: expect.any(String),
      admitted: true,
    });
  } finally {
    session.off("notice", heard);
  }
  const count = plans.filter((plan) => /Query Text: SELECT count\(\*\) FROM rw_runs/.test(plan));
  expect(count).toHaveLength(1);
  expect(count[0]).not.toContain("Seq Scan");
  expect(count[0]).toMatch(/rw_runs_namespace_status_id/);
  const counters = plans.filter((plan) => /rw_start_counts/.test(plan));
  expect(counters).toHaveLength(2); // read, then one more start counted
  for (const plan of counters) {
    expect(plan).not.toContain("Seq Scan");
    expect(plan).toMatch(/rw_start_counts_pkey/);
  }
});
