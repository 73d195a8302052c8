/** A fresh Postgres database for the durable benchmarks, the store over it, and a call counter. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { FolderBlobStore, SqlStore, migrate, openSqlClient, type Store } from "@rewind/store";
import { createTestDatabase } from "@rewind/store/testing";

export interface BenchDatabase {
  url: string;
  store: Store;
  /** One plain `pg` client on the same database, for the bare-INSERT floor and SHOW. */
  client: pg.Client;
  settings: Record<string, string>;
  close(): Promise<void>;
}

/** Server settings printed for context; synchronous_commit must be on (it is never changed here). */
const SETTINGS = [
  "synchronous_commit",
  "fsync",
  "wal_sync_method",
  "commit_delay",
  "server_version",
];

export async function openBenchDatabase(): Promise<BenchDatabase> {
  const database = await createTestDatabase("rewind_bench");
  const blobDir = mkdtempSync(path.join(tmpdir(), "rewind-bench-blobs-"));
  let sql: Awaited<ReturnType<typeof openSqlClient>> | undefined;
  let client: pg.Client | undefined;
  const cleanup = async () => {
    await client?.end().catch(() => {});
    await sql?.close().catch(() => {});
    await database.drop();
    rmSync(blobDir, { recursive: true, force: true });
  };
  try {
    sql = await openSqlClient({ databaseUrl: database.url });
    await migrate(sql);
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const settings: Record<string, string> = {};
    for (const name of SETTINGS) {
      const { rows } = await client.query<Record<string, string>>(`SHOW ${name}`);
      settings[name] = rows[0]![name]!;
    }
    const store = new SqlStore(sql, new FolderBlobStore(blobDir));
    let closed = false;
    return {
      url: database.url,
      store,
      client,
      settings,
      async close() {
        if (closed) return;
        closed = true;
        await cleanup();
      },
    };
  } catch (error) {
    await cleanup().catch(() => {});
    throw error;
  }
}

/** Counts the store's method calls by name (each one is at least one round trip to Postgres). */
export interface StoreCounter {
  calls: Map<string, number>;
  /** Appends carried by `commit` calls (a group commit carries several). */
  appends: number;
  reset(): void;
  count(name: string): number;
}

export function countingStore(store: Store): { store: Store; counter: StoreCounter } {
  const counter: StoreCounter = {
    calls: new Map(),
    appends: 0,
    reset() {
      this.calls.clear();
      this.appends = 0;
    },
    count(name) {
      return this.calls.get(name) ?? 0;
    },
  };
  const wrapped = new Proxy(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== "function" || typeof key !== "string") return value;
      return (...args: unknown[]) => {
        counter.calls.set(key, counter.count(key) + 1);
        if (key === "commit") counter.appends += (args[0] as unknown[]).length;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: wrapped, counter };
}
