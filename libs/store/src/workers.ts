/**
 * The workers alive and the epochs they run (migrations/0006_workers.sql): each says so every few
 * seconds. Redis knows who listens on each epoch's queue too, but Redis is only a doorbell; the
 * store is where the API and the dashboard read who is there.
 */
import type { SqlClient } from "./sql.js";

export interface LiveWorker {
  owner: string;
  epochs: number[];
  startedAt: Date;
  seenAt: Date;
}

/** How long a row unseen stays: long past any heartbeat, only so the table does not grow. */
const FORGET_AFTER = "1 day";

export async function workerSeen(
  sql: SqlClient,
  owner: string,
  epochs: readonly number[],
): Promise<void> {
  await sql.query(
    `WITH forgotten AS (DELETE FROM rw_workers WHERE seen_at < now() - interval '${FORGET_AFTER}')
     INSERT INTO rw_workers (owner, epochs) VALUES ($1, $2)
     ON CONFLICT (owner) DO UPDATE SET epochs = excluded.epochs, seen_at = now()`,
    [owner, [...epochs]],
  );
}

export async function workerGone(sql: SqlClient, owner: string): Promise<void> {
  await sql.query("DELETE FROM rw_workers WHERE owner = $1", [owner]);
}

export async function liveWorkers(sql: SqlClient, seenWithinMs: number): Promise<LiveWorker[]> {
  const rows = await sql.query<{
    owner: string;
    epochs: number[];
    started_at: Date | string;
    seen_at: Date | string;
  }>(
    `SELECT owner, epochs, started_at, seen_at FROM rw_workers
      WHERE seen_at > now() - $1 * interval '1 millisecond' ORDER BY owner`,
    [seenWithinMs],
  );
  return rows.map((row) => ({
    owner: row.owner,
    epochs: row.epochs.map(Number),
    startedAt: new Date(row.started_at),
    seenAt: new Date(row.seen_at),
  }));
}
