/**
 * The runs list's filters are indexed (issue 15): on Postgres, with 60,000 runs of 30 scripts
 * and one run of a rare script, each query listRuns and countRuns send is explained, and the
 * rare script's runs are read from the (namespace, script_hash, id) index, not found by a walk
 * along the whole namespace.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { FolderBlobStore, SqlStore, migrate, openSqlClient, type SqlClient } from "../src/index.js";
import { createTestDatabase } from "../src/testing.js";

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: SqlClient;
let store: SqlStore;
let blobDir = "";
/** Every statement the store sent, with its parameters. */
const sent: { text: string; params: readonly unknown[] }[] = [];

beforeAll(async () => {
  database = await createTestDatabase("rewind_plan");
  const client = await openSqlClient({ databaseUrl: database.url });
  await migrate(client);
  await client.query(`
    INSERT INTO rw_namespaces (name) VALUES ('acme') ON CONFLICT DO NOTHING;
    INSERT INTO rw_scripts (namespace, hash, entry, code, source_map)
      SELECT 'acme', 'sha256:common' || i, 'common' || i || '.ts', '', '' FROM generate_series(1, 30) i;
    -- Two versions of rare.ts (each edit is another hash): one run of the older.
    INSERT INTO rw_scripts (namespace, hash, entry, code, source_map)
      VALUES ('acme', 'sha256:rare1', 'rare.ts', '', ''), ('acme', 'sha256:rare2', 'rare.ts', '', '');
    INSERT INTO rw_runs (id, namespace, script_hash, toolset, epoch, status, ttl_ms)
      SELECT 'run_' || lpad(i::text, 8, '0'), 'acme', 'sha256:common' || (1 + i % 30), 'shop', 2,
             CASE WHEN i % 7 = 0 THEN 'failed' ELSE 'completed' END, 60000
      FROM generate_series(1, 60000) i;
    INSERT INTO rw_runs (id, namespace, script_hash, toolset, epoch, status, ttl_ms)
      VALUES ('run_00000000_rare', 'acme', 'sha256:rare1', 'shop', 2, 'failed', 60000);
    ANALYZE;
  `);
  // The store's client, recording what it sends.
  sql = {
    ...client,
    kind: client.kind,
    db: client.db,
    query: (text, params = []) => {
      sent.push({ text, params });
      return client.query(text, params);
    },
  };
  blobDir = mkdtempSync(path.join(tmpdir(), "rewind-plan-blobs-"));
  store = new SqlStore(sql, new FolderBlobStore(blobDir));
}, 120_000);

afterAll(async () => {
  await store?.close();
  await database?.drop();
  if (blobDir !== "") rmSync(blobDir, { recursive: true, force: true });
});

/** The plan Postgres makes for a statement with its parameters, as JSON text. */
async function plan(statement: { text: string; params: readonly unknown[] }): Promise<string> {
  const rows = await sql.query<{ "QUERY PLAN": unknown }>(
    `EXPLAIN (FORMAT JSON) ${statement.text}`,
    statement.params,
  );
  return JSON.stringify(rows[0]!["QUERY PLAN"]);
}

/** The statements a call sent that read rw_runs. */
async function runsStatements(call: () => Promise<unknown>) {
  sent.length = 0;
  await call();
  return sent.filter((s) => /FROM rw_runs r/.test(s.text));
}

it("reads a rare script's runs, by file name or hash, from the script index", async () => {
  for (const script of ["rare.ts", "sha256:rare1"]) {
    const runs = await store.listRuns({ namespace: "acme", script, limit: 50 });
    expect(runs.map((r) => r.id)).toEqual(["run_00000000_rare"]);
    const [list] = await runsStatements(() =>
      store.listRuns({ namespace: "acme", script, limit: 50 }),
    );
    expect(await plan(list!)).toContain("rw_runs_namespace_script_id");
    const [count] = await runsStatements(() => store.countRuns({ namespace: "acme", script }));
    expect(await plan(count!)).toContain("rw_runs_namespace_script_id");
    expect(await store.countRuns({ namespace: "acme", script })).toEqual({ failed: 1 });
  }
  // With a status too, and paged: still that index (or the status one), never a walk.
  const paged = await runsStatements(() =>
    store.listRuns({ namespace: "acme", script: "rare.ts", status: "failed", before: "run_1" }),
  );
  expect(await plan(paged[0]!)).toMatch(/rw_runs_namespace_(script|status)_id/);
});

it("asks nothing of rw_runs for a script it does not know", async () => {
  expect(
    await runsStatements(() => store.listRuns({ namespace: "acme", script: "nope.ts" })),
  ).toEqual([]);
  expect(await store.countRuns({ namespace: "acme", script: "nope.ts" })).toEqual({});
});
