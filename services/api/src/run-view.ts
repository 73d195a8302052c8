import type { z } from "zod";
import { ENDED_STATUSES, type RunRecord, type Store } from "@rewind/store";
import { hop } from "@rewind/telemetry";
import { notFound } from "./errors.js";
import type { RunResult, RunView } from "@rewind/contract";

/** A run as the API shows it: dates as ISO strings, absent fields left out. */
export function toRunView(run: RunRecord): RunView {
  const view: RunView = {
    id: run.id,
    status: run.status,
    namespace: run.namespace,
    scriptHash: run.scriptHash,
    toolset: run.toolset,
    epoch: run.epoch,
    lastSeq: run.lastSeq,
    createdAt: run.createdAt.toISOString(),
    updatedAt: run.updatedAt.toISOString(),
  };
  if (run.script !== undefined) view.script = run.script;
  if (run.parent !== undefined) view.parent = run.parent;
  if (run.result !== undefined) view.result = run.result;
  if (run.error !== undefined) view.error = run.error;
  if (run.endedAt !== undefined) view.endedAt = run.endedAt.toISOString();
  if (run.expiresAt !== undefined) view.expiresAt = run.expiresAt.toISOString();
  return view;
}

/**
 * Whether a run's journal replays as recorded (docs/capture-policy.md): "not-strict" from the
 * first entry a capture policy redacted after the script saw it in the clear.
 */
export function replayability(
  redacted: { seq: number; rules: string[] } | undefined,
): Pick<RunView, "replayable" | "firstRedacted"> {
  return redacted === undefined
    ? { replayable: "strict" }
    : { replayable: "not-strict", firstRedacted: redacted };
}

/**
 * The run with this id in this namespace. A run of another namespace is answered exactly like a
 * run that does not exist, so ids of other tenants are never confirmed.
 */
export async function findRun(store: Store, namespace: string, id: string): Promise<RunRecord> {
  const run = await store.getRun(id);
  if (run === undefined || run.namespace !== namespace) {
    throw notFound(`No run ${id} in this namespace: check the id (GET /v1/runs lists your runs)`);
  }
  return run;
}

/** Whether the run has ended (completed, failed or cancelled; a quarantined run has not). */
export function ended(run: RunRecord): boolean {
  return ENDED_STATUSES.has(run.status);
}

/**
 * What a wait for a run's end answers (GET …/result, POST /v1/runs?wait): its status, and its
 * outcome once it has ended; an ended run's answer is marked as the `api.result` hop.
 */
export function outcomeOf(run: RunRecord): Omit<z.input<typeof RunResult>, "id"> {
  if (ended(run)) hop("api.result", run.id);
  return {
    status: run.status,
    ended: ended(run),
    ...(run.result !== undefined ? { result: run.result } : {}),
    ...(run.error !== undefined ? { error: run.error } : {}),
  };
}
