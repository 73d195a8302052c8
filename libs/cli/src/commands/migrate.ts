import { RewindError, parseDuration } from "@rewind/core";
import { checkSchema, migrate, openSqlClient, SCHEMA_VERSION } from "@rewind/store";

export interface MigrateOptions {
  /** Apply nothing: exit 0 when the schema is this build's, 1 (saying why) otherwise. */
  check?: boolean;
  /** With --check: keep asking for this long (`90s`, `10m`) before answering no. */
  wait?: string;
}

/**
 * `rewind migrate`: applies the migrations the database named by DATABASE_URL (or .rewind/)
 * lacks. `--check [--wait 10m]` is what a deployment's services run before they start: it waits
 * for the migration step (another process, under its advisory lock) instead of racing it.
 */
export async function migrateCommand(options: MigrateOptions = {}): Promise<number> {
  const url = process.env.DATABASE_URL;
  const where = url === undefined ? "the embedded database under .rewind/" : "DATABASE_URL";
  if (options.check === true) return checkCommand(url, where, parseWait(options.wait));
  if (options.wait !== undefined)
    throw new RewindError(
      "INVALID_INPUT",
      "--wait goes with --check: `rewind migrate --check --wait 10m`",
    );
  const client = await openSqlClient(url === undefined ? {} : { databaseUrl: url });
  try {
    const { applied } = await migrate(client);
    process.stdout.write(
      applied.length === 0
        ? `${where} is up to date (schema version ${SCHEMA_VERSION})\n`
        : `applied to ${where}: ${applied.join(", ")}\n`,
    );
    return 0;
  } finally {
    await client.close();
  }
}

async function checkCommand(url: string | undefined, where: string, waitMs: number) {
  const deadline = Date.now() + waitMs;
  for (let attempt = 0; ; attempt++) {
    let problem: string;
    try {
      const client = await openSqlClient(url === undefined ? {} : { databaseUrl: url });
      try {
        await checkSchema(client);
        process.stdout.write(
          `${where} has schema version ${SCHEMA_VERSION}, as this build needs\n`,
        );
        return 0;
      } finally {
        await client.close();
      }
    } catch (error) {
      problem = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() >= deadline) {
      process.stderr.write(`rewind: ${problem}\n`);
      return 1;
    }
    // Once, then quietly: a waiting init container's log says what it waits for.
    if (attempt === 0) process.stderr.write(`rewind: waiting for the schema: ${problem}\n`);
    await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, deadline - Date.now())));
  }
}

function parseWait(wait: string | undefined): number {
  if (wait === undefined) return 0;
  try {
    return parseDuration(wait, "--wait");
  } catch (error) {
    throw new RewindError("INVALID_INPUT", (error as Error).message);
  }
}
