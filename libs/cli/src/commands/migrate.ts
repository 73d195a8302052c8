import { migrate, openSqlClient } from "@rewind/store";

/** `rewind migrate`: applies the migrations the database named by DATABASE_URL (or .rewind/) lacks. */
export async function migrateCommand(): Promise<number> {
  const url = process.env.DATABASE_URL;
  const client = await openSqlClient(url === undefined ? {} : { databaseUrl: url });
  try {
    const { applied } = await migrate(client);
    const where = url === undefined ? "the embedded database under .rewind/" : "DATABASE_URL";
    process.stdout.write(
      applied.length === 0
        ? `${where} is up to date\n`
        : `applied to ${where}: ${applied.join(", ")}\n`,
    );
    return 0;
  } finally {
    await client.close();
  }
}
