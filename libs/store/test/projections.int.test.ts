import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JournalEntry, RunStartedEntry } from "@rewind/core";
import { FolderBlobStore, SqlStore, migrate, openSqlClient } from "../src/index.js";
import type { Lease, RunAppend } from "../src/index.js";
import { createTestDatabase } from "../src/testing.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

// The projector's cursor (migration 0012, docs/traces.md) against a real Postgres: a window never
// passes a transaction still running, so a row that commits late is never skipped.

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let store: SqlStore;
let blobDir: string;
let counter = 0;

beforeAll(async () => {
  database = await createTestDatabase("rewind_projections");
  const sql = await openSqlClient({ databaseUrl: database.url });
  await migrate(sql);
  blobDir = mkdtempSync(path.join(tmpdir(), "rewind-blobs-"));
  store = new SqlStore(sql, new FolderBlobStore(blobDir));
  await store.putScript("default", { hash: "sha256:s", entry: "s.ts", code: "x", sourceMap: "{}" });
});

afterAll(async () => {
  await store?.close();
  await database?.drop();
  if (blobDir) rmSync(blobDir, { recursive: true, force: true });
});

async function newRun(ttlMs = 60_000) {
  counter++;
  const started: RunStartedEntry = {
    seq: 1,
    kind: "run.started",
    at: 1_000,
    runId: `run_proj_${counter}`,
    scriptHash: "sha256:s",
    input: {},
    seed: "ab".repeat(32),
    epoch: 1,
    toolset: "shop",
    namespace: "default",
  };
  await store.createRun({
    started,
    ttlMs,
    traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
  });
  const lease = (await store.acquireLease(started.runId, "owner", 30_000))!;
  return { runId: started.runId, lease };
}

const call = (seq: number): JournalEntry => ({
  seq,
  kind: "call",
  at: 1_000,
  callsite: "s.ts:3:5",
  name: "charge",
  args: { n: seq },
  callId: `c${seq}`,
});

/** Commits a run's first call (seq 2) under its lease, as a worker's first step does. */
const commitFirstCall = (lease: Lease, activation?: RunAppend["activation"]) =>
  store.commit([
    {
      lease,
      afterSeq: 1,
      entries: [call(2)],
      status: "running",
      runRowUnchanged: true,
      ...(activation === undefined ? {} : { activation }),
    },
  ]);

/** Reads windows from `below` until the horizon, as the projector does. */
async function drain(below: bigint) {
  const rows: string[] = [];
  for (;;) {
    const window = await store.projectionWindow(below, 2);
    for (const row of window.rows) rows.push(`${row.runId}:${row.seq}`);
    if (window.nextBelow === below) return { rows, below };
    below = window.nextBelow;
  }
}

/**
 * Drains until the rows wanted are read: the horizon is the whole server's, so a transaction of
 * anyone's (another test file's) still running may hold a window back for a moment. That is lag,
 * never loss: read again from the same cursor.
 */
async function drainTo(below: bigint, wanted: readonly string[]) {
  for (let tries = 0; ; tries++) {
    const drained = await drain(below);
    if (wanted.every((row) => drained.rows.includes(row)) || tries === 100) return drained;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("projection windows", () => {
  it("never skip a row that commits after a later transaction's row was read", async () => {
    const sink = "test-late";
    const start = await store.ensureProjectionCursor(sink);
    let below = start;
    const early = await newRun();
    const late = await newRun();
    below = (await drain(below)).below; // both run.started rows, delivered

    // A transaction takes its xid first and commits last.
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query("BEGIN");
      await client.query(
        "INSERT INTO rw_journal (run_id, seq, kind, at, callsite, body) VALUES ($1, 2, 'output', 1000, NULL, '{}')",
        [late.runId],
      );
      // A later transaction commits while the first still runs.
      expect(await commitFirstCall(early.lease)).toEqual(["ok"]);
      const first = await drain(below);
      // The committed row is held back with the running one: the window stops at the horizon.
      expect(first.rows).toEqual([]);
      await client.query("COMMIT");
    } finally {
      await client.end();
    }
    const second = await drainTo(below, [`${early.runId}:2`, `${late.runId}:2`]);
    expect(second.rows.sort()).toEqual([`${early.runId}:2`, `${late.runId}:2`].sort());
    expect(await store.advanceProjectionCursor(sink, start, second.below, 4)).toBe(true);
    // From where it no longer is, the cursor does not move (another projector went first).
    expect(await store.advanceProjectionCursor(sink, start, second.below, 4)).toBe(false);
  });

  it("bring a sink of some kinds only its rows, bounded as everyone's window", async () => {
    const start = await store.ensureProjectionCursor("test-kinds");
    const run = await newRun();
    expect(
      await commitFirstCall(run.lease, {
        kind: "cold",
        replayed: 1,
        attempt: 1,
        scheduleToStartMs: 1,
        startedAt: Date.now(),
      }),
    ).toEqual(["ok"]);
    const everything = await drainTo(start, [`${run.runId}:2`]);
    const all = await store.projectionWindow(start, 1_000);
    const some = await store.projectionWindow(start, 1_000, new Set(["run.completed"]));
    const calls = await store.projectionWindow(start, 1_000, new Set(["call"]));
    // Same bounds, same transactions: the cursor of a sink that wants none of them still moves.
    for (const window of [some, calls]) {
      expect(window.nextBelow).toBe(all.nextBelow);
      expect(window.transactions).toBe(all.transactions);
      expect(window.activations).toEqual([]);
    }
    expect(all.transactions).toBeGreaterThan(0);
    expect(all.nextBelow).toBeGreaterThanOrEqual(everything.below);
    expect(all.activations.some((a) => a.runId === run.runId)).toBe(true);
    expect(some.rows.filter((r) => r.runId === run.runId)).toEqual([]);
    expect(calls.rows.filter((r) => r.runId === run.runId).map((r) => r.seq)).toEqual([2]);
  });

  it("record an activation in the same commit as its entries, with commit times", async () => {
    const run = await newRun();
    const startedAt = Date.now();
    expect(
      await commitFirstCall(run.lease, {
        kind: "cold",
        replayed: 1,
        attempt: 1,
        scheduleToStartMs: 7,
        startedAt,
      }),
    ).toEqual(["ok"]);
    const projected = (await store.projectedRun(run.runId))!;
    expect(projected.traceparent).toBe("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    expect([...projected.committedUs.keys()]).toEqual([1, 2]);
    expect(projected.committedUs.get(2)! / 1000).toBeGreaterThanOrEqual(startedAt - 5_000);
    expect(projected.activations).toMatchObject([
      { runId: run.runId, seq: 2, kind: "cold", replayed: 1, attempt: 1, scheduleToStartMs: 7 },
    ]);
    expect(Math.abs(projected.activations[0]!.startedUs / 1000 - startedAt)).toBeLessThan(2);
  });

  it("report a sink's lag from its first undelivered row, none once caught up", async () => {
    const sink = "test-lag";
    const lagOf = async () => (await store.projectionLags()).find((l) => l.sink === sink)!;
    let caughtUp = await store.ensureProjectionCursor(sink);
    for (let tries = 0; tries < 100; tries++) {
      const { below } = await drain(caughtUp);
      if (below !== caughtUp)
        expect(await store.advanceProjectionCursor(sink, caughtUp, below, 0)).toBe(true);
      caughtUp = below;
      if ((await lagOf()).oldestPending === undefined) break;
      await new Promise((resolve) => setTimeout(resolve, 50)); // the horizon held back
    }
    expect(await lagOf()).toEqual({ sink });
    const listed = async () => (await store.projectionCursors()).find((c) => c.sink === sink)!;
    expect((await listed()).pendingRows).toBe(0);

    const before = Date.now();
    const run = await newRun(); // its run.started row: the first this sink has not delivered
    await commitFirstCall(run.lease);
    const lag = await lagOf();
    const first = (await store.projectedRun(run.runId))!.committedUs.get(1)!;
    expect(lag.oldestPending?.getTime()).toBe(Math.floor(first / 1000));
    expect(lag.oldestPending!.getTime()).toBeGreaterThanOrEqual(before - 5_000);
    const cursor = await listed();
    expect(cursor.oldestPending).toEqual(lag.oldestPending);
    expect(cursor.pendingRows).toBeGreaterThanOrEqual(2);

    const { below: to } = await drainTo(caughtUp, [`${run.runId}:1`, `${run.runId}:2`]);
    expect(await store.advanceProjectionCursor(sink, caughtUp, to, 2)).toBe(true);
    expect(await lagOf()).toEqual({ sink });
    expect((await listed()).pendingRows).toBe(0);
  });

  it("keep an expired run until every sink delivered it", async () => {
    const sink = "test-retention";
    const below = await store.ensureProjectionCursor(sink);
    const run = await newRun(1);
    await store.commit([
      {
        lease: run.lease,
        afterSeq: 1,
        entries: [{ seq: 2, kind: "run.completed", at: 1_000, result: 1 }],
        status: "completed",
        releaseLease: true,
      },
    ]);
    const later = new Date(Date.now() + 60_000);
    await store.deleteExpired(later);
    expect(await store.getRun(run.runId)).toBeDefined();
    const cursors = await store.projectionCursors();
    expect(cursors.find((c) => c.sink === sink)!.pendingRows).toBeGreaterThan(0);
    // Every sink catches up: the run goes.
    for (const cursor of cursors) {
      const { below: to } = await drainTo(cursor.below, [`${run.runId}:2`]);
      await store.advanceProjectionCursor(cursor.sink, cursor.below, to, 0);
    }
    expect(below).toBe(0n);
    await store.deleteExpired(later);
    expect(await store.getRun(run.runId)).toBeUndefined();
  });
});
