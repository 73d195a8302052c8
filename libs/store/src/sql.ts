import { mkdirSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzleNodePg } from "drizzle-orm/node-postgres";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import pg from "pg";
import * as schema from "./schema.js";
import { lockDataDir } from "./data-dir-lock.js";

/** A transaction: parameterised queries, and `exec` for a script of several statements. */
export interface SqlTx {
  query<T = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<T[]>;
  exec(script: string): Promise<void>;
}

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

/**
 * The two drivers behind one store: node-postgres for a Postgres server, PGlite (Postgres in
 * WebAssembly, in-process, on a folder) for the embedded default. Both speak the same SQL, so the
 * store is written once against this small interface and the conformance suite runs on both.
 */
export interface SqlClient {
  readonly kind: "postgres" | "pglite";
  /** drizzle over the same connection(s), for typed queries. */
  readonly db: Db;
  query<T = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<T[]>;
  /**
   * A statement run often, prepared once per connection under `name` (Postgres plans it once);
   * answers the rows it returned and the number of rows it wrote.
   */
  execute<T = Record<string, unknown>>(
    name: string,
    text: string,
    params: readonly unknown[],
  ): Promise<{ rows: T[]; count: number }>;
  /** Runs `body` in one transaction on one connection. */
  transaction<T>(body: (tx: SqlTx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export function postgresClient(url: string, poolSize = 10): SqlClient {
  // Idle connections stay open: with an idle timeout, the pool arms a timer at every release,
  // which cost each query about 20 µs (a tenth of a hot tool call's overhead here).
  const pool = new pg.Pool({ connectionString: url, max: poolSize, idleTimeoutMillis: 0 });
  // An idle client's error (a restarted server) must not crash the process: the next query fails.
  pool.on("error", () => {});
  return {
    kind: "postgres",
    db: drizzleNodePg(pool, { schema }),
    async query<T>(text: string, params: readonly unknown[] = []) {
      const result = await pool.query(text, params as unknown[]);
      return result.rows as T[];
    },
    async execute<T>(name: string, text: string, params: readonly unknown[]) {
      // A Query built from text (node-postgres copies a config object property by property, which
      // costs a hot tool call about 10 µs), then named: prepared once per connection.
      const query: pg.Query & { name?: string } = new pg.Query(text, params as unknown[]);
      query.name = name;
      // Typed as returning the query itself; given no callback, the pool answers a promise.
      const result = await (pool.query(query) as unknown as Promise<pg.QueryResult>);
      return { rows: result.rows as T[], count: result.rowCount ?? 0 };
    },
    async transaction<T>(body: (tx: SqlTx) => Promise<T>) {
      const client = await pool.connect();
      // While a client is checked out the pool does not listen for its errors. A server that
      // stops (or terminates the backend) between two queries of the transaction makes the
      // client emit 'error' with no query to fail: unheard, that event would crash the process.
      // Heard here, it marks the client broken; the query that follows fails and the caller
      // retries (the journal is fenced: a half-done transaction was rolled back by the server).
      let broken: Error | undefined;
      const onError = (error: Error) => (broken = error);
      client.on("error", onError);
      try {
        await client.query("BEGIN");
        const result = await body({
          query: async <R>(text: string, params: readonly unknown[] = []) =>
            (await client.query(text, params as unknown[])).rows as R[],
          // Without parameters node-postgres uses the simple protocol: several statements at once.
          exec: async (script: string) => {
            await client.query(script);
          },
        });
        await client.query("COMMIT");
        return result;
      } catch (error) {
        if (broken === undefined) await client.query("ROLLBACK").catch(() => {});
        throw error;
      } finally {
        client.removeListener("error", onError);
        // A broken client is destroyed rather than handed to the next transaction.
        client.release(broken);
      }
    },
    close: () => pool.end(),
  };
}

export async function pgliteClient(dataDir: string | undefined): Promise<SqlClient> {
  if (dataDir !== undefined) mkdirSync(dataDir, { recursive: true }); // PGlite makes only the last level
  const unlock = dataDir === undefined ? () => {} : lockDataDir(dataDir);
  const db = dataDir === undefined ? new PGlite() : new PGlite(dataDir);
  try {
    await db.waitReady;
  } catch (error) {
    unlock();
    throw error;
  }
  return {
    kind: "pglite",
    db: drizzlePglite(db, { schema }) as unknown as Db,
    async query<T>(text: string, params: readonly unknown[] = []) {
      return (await db.query<T>(text, params as unknown[])).rows;
    },
    async execute<T>(_name: string, text: string, params: readonly unknown[]) {
      const result = await db.query<T>(text, params as unknown[]);
      return { rows: result.rows, count: result.affectedRows ?? 0 };
    },
    async transaction<T>(body: (tx: SqlTx) => Promise<T>) {
      return db.transaction(async (tx) =>
        body({
          query: async <R>(text: string, params: readonly unknown[] = []) =>
            (await tx.query<R>(text, params as unknown[])).rows,
          exec: async (script: string) => {
            await tx.exec(script);
          },
        }),
      );
    },
    close: async () => {
      await db.close();
      unlock();
    },
  };
}
