import path from "node:path";
import { FolderBlobStore, type BlobStore } from "./blobs.js";
import { checkSchema, migrate } from "./migrate.js";
import { pgliteClient, postgresClient, type SqlClient } from "./sql.js";
import { SqlStore } from "./sql-store.js";
import type { Store } from "./store.js";

export interface StoreConfig {
  /** Postgres URL; unset means the embedded PGlite under `dataDir`. */
  databaseUrl?: string;
  /** The embedded default's folder (`.rewind/` by default). */
  dataDir?: string;
  /** A folder for blobs (default: `<dataDir>/blobs`); S3 URLs come with the S3 blob store. */
  blobs?: BlobStore;
  /** Apply migrations first (the embedded default does; production runs `rewind migrate`). */
  migrate?: boolean;
  poolSize?: number;
}

export async function openSqlClient(config: StoreConfig): Promise<SqlClient> {
  if (config.databaseUrl !== undefined) return postgresClient(config.databaseUrl, config.poolSize);
  return pgliteClient(path.join(config.dataDir ?? ".rewind", "pglite"));
}

/** Opens the store the configuration names and checks its schema version. */
export async function openStore(config: StoreConfig): Promise<Store> {
  const client = await openSqlClient(config);
  try {
    if (config.migrate) await migrate(client);
    else await checkSchema(client);
  } catch (error) {
    await client.close();
    throw error;
  }
  const blobs =
    config.blobs ?? new FolderBlobStore(path.join(config.dataDir ?? ".rewind", "blobs"));
  return new SqlStore(client, blobs);
}
