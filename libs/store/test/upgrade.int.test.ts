/**
 * A database that an older build migrated, with runs in it, brought to this build's schema by
 * `rewind migrate`: what a deployment does. Migration 0005 changed how a hot run is stored (no
 * foreign key from the journal, attempts counted at the lease, one index of open runs); a run
 * created before it must load, step, end and be retained like a new one.
 */
import { afterAll, expect, it } from "vitest";
import { FolderBlobStore, SqlStore, migrate, openSqlClient } from "../src/index.js";
import { migrations } from "../src/migrate.js";
import { createTestDatabase } from "../src/testing.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const database = await createTestDatabase("rewind_upgrade");
const sql = await openSqlClient({ databaseUrl: database.url });
const blobDir = mkdtempSync(path.join(tmpdir(), "rw-up-"));
afterAll(async () => {
  await sql.close();
  await database.drop();
  rmSync(blobDir, { recursive: true, force: true });
});

it("brings a version-4 database with a queued run to this build's schema, and the run goes on", async () => {
  // As a build of schema 4 left it: migrations 1–4, and a run queued after a crashed attempt.
  await sql.query(
    "CREATE TABLE rw_schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
  );
  for (const migration of migrations().filter((m) => m.version <= 4)) {
    await sql.transaction((tx) => tx.exec(migration.sql));
    await sql.query("INSERT INTO rw_schema_migrations (version, name) VALUES ($1, $2)", [
      migration.version,
      migration.name,
    ]);
  }
  await sql.query("INSERT INTO rw_namespaces (name) VALUES ('default')");
  await sql.query(
    "INSERT INTO rw_scripts (hash, entry, code, source_map) VALUES ('sha256:old', 'old.ts', 'x', '{}'), ('sha256:unused', 'unused.ts', 'y', '{}')",
  );
  await sql.query(
    `INSERT INTO rw_runs (id, namespace, script_hash, toolset, epoch, status, ttl_ms, attempts)
     VALUES ('run_old', 'default', 'sha256:old', 'shop', 1, 'queued', 60000, 2)`,
  );
  await sql.query(
    `INSERT INTO rw_journal (run_id, seq, kind, at, callsite, body) VALUES ('run_old', 1, 'run.started', 1, NULL, $1)`,
    [
      JSON.stringify({
        runId: "run_old",
        scriptHash: "sha256:old",
        inputJson: "null",
        seed: "00".repeat(32),
        epoch: 1,
        toolset: "shop",
        namespace: "default",
      }),
    ],
  );

  const { applied } = await migrate(sql);
  expect(applied).toEqual(
    migrations()
      .filter((m) => m.version > 4)
      .map((m) => m.name),
  );
  const store = new SqlStore(sql, new FolderBlobStore(blobDir));
  // Migration 0008: the script is now its namespace's, and only that namespace's; a script no
  // run used is gone.
  expect(await store.getScript("default", "sha256:old")).toMatchObject({ entry: "old.ts" });
  expect(await store.getScript("other", "sha256:old")).toBeUndefined();
  expect(await store.getScript("default", "sha256:unused")).toBeUndefined();

  // Loaded: running now, and its journal grew since its attempts were last counted (never, by
  // this schema): the count starts at 1.
  const loaded = (await store.loadRun("run_old", "worker-new", 30_000, { epochs: [1] }))!;
  expect(loaded.record.status).toBe("running");
  expect(loaded.lease.attempts).toBe(1);
  expect(loaded.journal).toHaveLength(1);
  const call = { seq: 2, kind: "call", at: 2, callId: "run_old:2", name: "lookup", args: {} };
  const step = { lease: loaded.lease, afterSeq: 1, status: "running" as const };
  expect(
    await store.commit([{ ...step, entries: [call as never], runRowUnchanged: true }]),
  ).toEqual(["ok"]);
  const end = { seq: 3, kind: "run.completed", at: 3, result: null };
  expect(
    await store.commit([
      { ...step, afterSeq: 2, status: "completed", entries: [end as never], releaseLease: true },
    ]),
  ).toEqual(["ok"]);
  expect(await store.getRun("run_old")).toMatchObject({ status: "completed", lastSeq: 3 });

  // Retention takes its journal with it (there is no foreign key to cascade any more).
  await store.deleteExpired(new Date(Date.now() + 120_000));
  expect(await store.getRun("run_old")).toBeUndefined();
  expect(await store.readJournal("run_old")).toEqual([]);
});
