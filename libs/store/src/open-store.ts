import path from "node:path";
import type { BlobStore } from "./blobs.js";
import { blobStoreFromUrl } from "./blob-url.js";
import { CODEC_KEYS_ENV, codecFromKeys } from "./codec.js";
import { checkSchema, migrate } from "./migrate.js";
import { pgliteClient, postgresClient, type SqlClient } from "./sql.js";
import { SqlStore } from "./sql-store.js";
import type { Store } from "./store.js";

export interface StoreConfig {
  /** Postgres URL; unset means the embedded PGlite under `dataDir`. */
  databaseUrl?: string;
  /** The embedded default's folder (`.rewind/` by default). */
  dataDir?: string;
  /** The blob store itself; when given, `blobUrl` is ignored. */
  blobs?: BlobStore;
  /** `REWIND_BLOB_URL`: `s3://bucket/prefix`, a folder or `file://` URL; unset is `<dataDir>/blobs`. */
  blobUrl?: string;
  /** Apply migrations first (the embedded default does; production runs `rewind migrate`). */
  migrate?: boolean;
  poolSize?: number;
  /**
   * `REWIND_CODEC_KEYS`: the payload codec's keys (`id:base64key,…`, the first seals); unset
   * reads the process's environment, "" means none (docs/codec.md).
   */
  codecKeys?: string;
}

export async function openSqlClient(config: StoreConfig): Promise<SqlClient> {
  if (config.databaseUrl !== undefined) return postgresClient(config.databaseUrl, config.poolSize);
  return pgliteClient(path.join(config.dataDir ?? ".rewind", "pglite"));
}

/** Opens the store the configuration names and checks its schema version. */
export async function openStore(config: StoreConfig): Promise<Store> {
  // Before the database: a malformed REWIND_BLOB_URL or key list fails without a client to close.
  const blobs = config.blobs ?? blobStoreFromUrl(config.blobUrl, config.dataDir ?? ".rewind");
  const codec = codecFromKeys(config.codecKeys ?? process.env[CODEC_KEYS_ENV]);
  const client = await openSqlClient(config);
  try {
    if (config.migrate) await migrate(client);
    else await checkSchema(client);
  } catch (error) {
    await client.close();
    throw error;
  }
  return new SqlStore(client, blobs, codec);
}
