/**
 * What the executor's integration tests share: a migrated database of their own with a blob
 * folder (made before the file's tests, dropped after them), runs created as the API creates
 * them, and a wait that fails with what it waited for.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { newSeed, type Json, type RunStartedEntry } from "@rewind/core";
import type { CompiledScript } from "@rewind/sandbox";
import { migrate, openSqlClient, FolderBlobStore, SqlStore, type Store } from "@rewind/store";
import { createTestDatabase } from "@rewind/store/testing";

/** Makes the file's store before its tests (handed to `use`), and drops it after them. */
export function useTestStore(name: string, use: (store: Store) => void): void {
  let store: Store | undefined;
  let drop: () => Promise<void> = async () => {};
  let blobDir: string | undefined;
  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    const sql = await openSqlClient({ databaseUrl: database.url });
    await migrate(sql);
    blobDir = mkdtempSync(path.join(tmpdir(), `rewind-${name}-`));
    store = new SqlStore(sql, new FolderBlobStore(blobDir));
    use(store);
  });
  afterAll(async () => {
    await store?.close();
    await drop();
    if (blobDir !== undefined) rmSync(blobDir, { recursive: true, force: true });
  });
}

let created = 0;

/** Stores the script and creates a run of it, as `POST /v1/runs` does; returns the run's id. */
export async function createRun(
  store: Store,
  script: CompiledScript,
  options: {
    toolset: string;
    input?: Json;
    epoch?: number;
    /** A fork: the run and seq it starts from. */
    parent?: { runId: string; seq: number };
    /** The W3C traceparent of the request that started it. */
    traceparent?: string;
  },
): Promise<string> {
  await store.putScript("default", script);
  const n = (created++).toString().padStart(3, "0");
  const runId = `run_${options.toolset}_${n}_${Date.now().toString(36)}`;
  const started: RunStartedEntry = {
    seq: 1,
    kind: "run.started",
    at: Date.now(),
    runId,
    scriptHash: script.hash,
    input: options.input ?? null,
    seed: newSeed(),
    epoch: options.epoch ?? 1,
    toolset: options.toolset,
    namespace: "default",
    ...(options.parent === undefined ? {} : { parent: options.parent }),
  };
  await store.createRun({
    started,
    ttlMs: 60_000,
    ...(options.traceparent === undefined ? {} : { traceparent: options.traceparent }),
  });
  return runId;
}

/** Waits until `check` holds; after `ms`, fails naming what it waited for. */
export async function until(
  check: () => Promise<boolean> | boolean,
  ms = 10_000,
  what = "the condition",
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
