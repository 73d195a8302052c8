/**
 * The EpochMigrator against a real store and real sandboxes: an operator's check replays each
 * open run of the old epoch with the checking worker's sandbox, calling nothing; a run that
 * diverges (here: a sandbox whose Math.random differs, as a new V8 or guest runtime may) stays,
 * a run some worker holds is skipped, a dry run moves nothing, and a run that matches is moved
 * with its checked seq recorded, then goes on under a worker of the new epoch, each call once.
 * The same across two real runtimes (Node 20 to 24): services/worker/test/epoch-upgrade.int.test.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { defineToolset, newSeed, type RunStartedEntry } from "@rewind/core";
import { Sandbox, compileScript } from "@rewind/sandbox";
import {
  FolderBlobStore,
  SqlStore,
  migrate,
  openSqlClient,
  type RunRoute,
  type Store,
} from "@rewind/store";
import { createTestDatabase } from "@rewind/store/testing";
import { EpochMigrator, Executor } from "../src/index.js";

let store: Store;
let drop: () => Promise<void>;
let blobDir: string;
const sandbox = new Sandbox({ mode: "async" });
/** A runtime that computes differently: Math.random is not what the run was recorded with. */
const other = new Sandbox({ mode: "async", testOnlyPlatformBug: "Math.random = () => 0.25;" });

beforeAll(async () => {
  const database = await createTestDatabase();
  const sql = await openSqlClient({ databaseUrl: database.url });
  await migrate(sql);
  blobDir = mkdtempSync(path.join(tmpdir(), "rewind-epoch-move-"));
  store = new SqlStore(sql, new FolderBlobStore(blobDir));
  drop = database.drop;
});
afterAll(async () => {
  sandbox.dispose();
  other.dispose();
  await store.close();
  await drop();
  rmSync(blobDir, { recursive: true, force: true });
});

const calls: string[] = [];
const toolset = defineToolset("m", {
  note: async (args: { r: number }, ctx) => {
    calls.push(ctx.callId);
    return { noted: args.r };
  },
});

const SCRIPT = `import { tools, waitForSignal } from "rewind";
export default async function main() {
  await tools.note({ r: Math.random() });
  const go = await waitForSignal("go");
  await tools.note({ r: 1 });
  return go;
}
`;

async function submit(): Promise<string> {
  const script = await compileScript({ source: SCRIPT, filename: "mover.ts" });
  await store.putScript("default", script);
  const runId = `run_m_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const started: RunStartedEntry = {
    seq: 1,
    kind: "run.started",
    at: Date.now(),
    runId,
    scriptHash: script.hash,
    input: null,
    seed: newSeed(),
    epoch: 1,
    toolset: "m",
    namespace: "default",
  };
  await store.createRun({ started, ttlMs: 60_000 });
  return runId;
}

async function until(check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const executor = (owner: string, epochs: number[]) =>
  new Executor({ store, sandbox, toolsets: new Map([["m", toolset]]), owner, epochs });

const rings: RunRoute[] = [];
const migrator = (box: Sandbox) =>
  new EpochMigrator({
    store,
    sandbox: box,
    owner: "epoch-2-worker",
    epochs: [2],
    ring: async (route) => void rings.push(route),
  });

async function check(box: Sandbox, dryRun: boolean) {
  const { id } = await store.requestEpochCheck({
    namespace: "default",
    from: 1,
    to: 2,
    requestedBy: "ops (default)",
    dryRun,
  });
  expect(await migrator(box).runPending()).toBe(1);
  return (await store.getEpochCheck("default", id))!.report!;
}

it("moves the runs that replay the same, and only those", async () => {
  const [a, b] = [await submit(), await submit()];
  const old = executor("epoch-1-worker", [1]);
  await old.activate(a);
  await old.activate(b);
  await until(async () =>
    (await Promise.all([a, b].map((id) => store.getRun(id)))).every((r) => r?.status === "waiting"),
  );
  await old.close();
  const byRun = (report: { runs: { runId: string }[] }) =>
    new Map(report.runs.map((r) => [r.runId, r]));

  // On a runtime that computes differently, both diverge at their first call, and stay.
  const diverging = byRun(await check(other, false));
  for (const id of [a, b])
    expect(diverging.get(id)).toMatchObject({ verdict: "diverges", checkedSeq: 3, divergedAt: 2 });
  expect((await store.getRun(a))?.epoch).toBe(1);

  // On one that computes the same: a dry run says both would move, and moves neither.
  const dry = byRun(await check(sandbox, true));
  for (const id of [a, b]) expect(dry.get(id)).toMatchObject({ verdict: "would-move" });
  expect((await store.getRun(a))?.epoch).toBe(1);

  // Moving, while some worker holds b: a moves, b is skipped (it stays, to be checked again).
  const held = (await store.acquireLease(b, "someone", 30_000))!;
  const report = await check(sandbox, false);
  expect(report.checkedBy).toBe("epoch-2-worker");
  const moved = byRun(report);
  expect(moved.get(a)).toMatchObject({ verdict: "moved", checkedSeq: 3 });
  expect(moved.get(b)).toMatchObject({ verdict: "skipped" });
  expect((await store.getRun(a))?.epoch).toBe(2);
  expect((await store.getRun(b))?.epoch).toBe(1);
  expect(await store.epochMoves(a)).toMatchObject([
    { from: 1, to: 2, checkedSeq: 3, by: "ops (default)" },
  ]);
  expect(rings).toContainEqual(expect.objectContaining({ runId: a, epoch: 2 }));
  await store.releaseLease(held);
  // An old-epoch worker no longer touches the moved run; a worker of the new one carries it on.
  await store.addInbox(a, { kind: "signal", name: "go", payload: "moved" });
  const stale = executor("epoch-1-again", [1]);
  await stale.activate(a);
  await stale.close();
  expect((await store.getRun(a))?.status).toBe("waiting");
  const next = executor("epoch-2-executor", [2]);
  await next.activate(a);
  await until(async () => (await store.getRun(a))?.status === "completed");
  await next.close();
  const ofA = calls.filter((id) => id.startsWith(a));
  expect(ofA).toHaveLength(2);
  expect(new Set(ofA).size).toBe(2); // each call once: the check called nothing
  // The check took nothing of the runs it left: b still waits, for epoch 1's workers.
  expect((await store.getRun(b))?.status).toBe("waiting");
}, 60_000);
