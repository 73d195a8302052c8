import { existsSync, readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { RewindError } from "@rewind/core";
import type { SqlClient } from "./sql.js";

// In the repository the migrations live at its root (migrations/); a packed @rewind/store carries
// a copy in its own folder (its prepack script makes it), as an installed package sees no repo.
const MIGRATIONS_DIR = ["../migrations/", "../../../migrations/"]
  .map((relative) => fileURLToPath(new URL(relative, import.meta.url)))
  .find((dir) => existsSync(dir))!;

interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The SQL files of migrations/, in order: `0001_name.sql`, `0002_…`. */
export function migrations(): Migration[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((file) => /^\d{4}_.+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 4)),
      name: file,
      sql: readFileSync(MIGRATIONS_DIR + file, "utf8"),
    }));
}

/** The schema version this build expects. */
export const SCHEMA_VERSION = Math.max(...migrations().map((m) => m.version));

/** Applies the migrations the database lacks, one transaction each, under an advisory lock. */
export async function migrate(client: SqlClient): Promise<{ applied: string[] }> {
  await client.query(
    "CREATE TABLE IF NOT EXISTS rw_schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
  );
  const applied: string[] = [];
  for (const migration of migrations()) {
    const done = await client.transaction(async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock(7420)"); // two migrators never interleave
      const rows = await tx.query("SELECT 1 FROM rw_schema_migrations WHERE version = $1", [
        migration.version,
      ]);
      if (rows.length > 0) return false;
      await tx.exec(migration.sql);
      await tx.query("INSERT INTO rw_schema_migrations (version, name) VALUES ($1, $2)", [
        migration.version,
        migration.name,
      ]);
      return true;
    });
    if (done) applied.push(migration.name);
  }
  await checkSchema(client);
  return { applied };
}

/** Refuses to run against a database whose schema is newer than this build, or not migrated. */
export async function checkSchema(client: SqlClient): Promise<void> {
  let version = 0;
  try {
    const rows = await client.query<{ version: number | null }>(
      "SELECT max(version) AS version FROM rw_schema_migrations",
    );
    version = rows[0]?.version ?? 0;
  } catch {
    version = 0;
  }
  if (version > SCHEMA_VERSION) {
    throw new RewindError(
      "CONFLICT",
      `The database's schema is version ${version}, newer than this build of Rewind understands (${SCHEMA_VERSION}): ` +
        `run a newer Rewind against it, or point DATABASE_URL at another database`,
    );
  }
  if (version < SCHEMA_VERSION) {
    throw new RewindError(
      "CONFLICT",
      `The database's schema is version ${version}, older than this build needs (${SCHEMA_VERSION}): run \`rewind migrate\` first`,
    );
  }
}
