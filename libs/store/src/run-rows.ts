import type { ErrorData, Json } from "@rewind/core";
import { openText } from "./codec.js";
import type * as schema from "./schema.js";
import type { ValueReader } from "./values.js";
import type { RunRecord, RunStatus } from "./store.js";

export type RunRow = typeof schema.runs.$inferSelect;

/** A run's row as the API and workers see it (its result read back if stored apart). */
export async function toRecord(
  row: RunRow,
  lastSeq: number,
  values: ValueReader,
): Promise<RunRecord> {
  const record: RunRecord = {
    id: row.id,
    namespace: row.namespace,
    scriptHash: row.scriptHash,
    toolset: row.toolset,
    epoch: row.epoch,
    status: row.status as RunStatus,
    lastSeq,
    leases: row.leaseToken,
    ttlMs: row.ttlMs,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
  if (row.parentId !== null) record.parent = { runId: row.parentId, seq: row.parentSeq ?? 0 };
  if (row.resultJson !== null)
    record.result = JSON.parse(openText(row.resultJson, values.codec, row.namespace)) as Json;
  else if (row.resultRef !== null)
    record.result = (await values.load([row.resultRef], row.namespace)).get(row.resultRef)!;
  if (row.error !== null) {
    const { errorJson } = row.error as { errorJson?: unknown };
    record.error = (typeof errorJson === "string" ? JSON.parse(errorJson) : row.error) as ErrorData;
  }
  if (row.endedAt !== null) record.endedAt = row.endedAt;
  if (row.expiresAt !== null) record.expiresAt = row.expiresAt;
  if (row.traceparent !== null) record.traceparent = row.traceparent;
  if (row.leaseOwner !== null && row.leaseExpiresAt !== null && row.leaseExpiresAt > new Date())
    record.holder = row.leaseOwner;
  return record;
}

/** A run's row as `to_jsonb` spells it (loadRun reads it that way, in the same round trip). */
export function runRowFromJson(run: Record<string, unknown>): RunRow {
  const at = (key: string) => (run[key] === null ? null : new Date(run[key] as string));
  return {
    id: run.id as string,
    namespace: run.namespace as string,
    scriptHash: run.script_hash as string,
    toolset: run.toolset as string,
    epoch: run.epoch as number,
    status: run.status as string,
    parentId: run.parent_id as string | null,
    parentSeq: run.parent_seq as number | null,
    leaseOwner: run.lease_owner as string | null,
    leaseToken: Number(run.lease_token),
    leaseExpiresAt: at("lease_expires_at"),
    attempts: run.attempts as number,
    attemptSeq: run.attempt_seq as number,
    deaths: (run.deaths as number | undefined) ?? 0,
    deathSeq: (run.death_seq as number | undefined) ?? 0,
    deathCause: (run.death_cause as string | null | undefined) ?? null,
    resultJson: run.result_json as string | null,
    resultRef: run.result_ref as string | null,
    error: run.error,
    ttlMs: Number(run.ttl_ms),
    createdAt: at("created_at")!,
    updatedAt: at("updated_at")!,
    endedAt: at("ended_at"),
    expiresAt: at("expires_at"),
    traceparent: (run.traceparent as string | null | undefined) ?? null,
  };
}
