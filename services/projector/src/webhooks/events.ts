import { WEBHOOK_EVENT_TYPES, type WebhookEventType, type WebhookPayload } from "@rewind/contract";
import type { WebhookEvent } from "@rewind/store";
import type { RunView } from "../span-model.js";
import { eventIdOf } from "./signature.js";

/** The run's status each event puts it in (the payload's `data.status`). */
const STATUS_AFTER: Record<WebhookEventType, string> = {
  "run.started": "queued",
  "run.completed": "completed",
  "run.failed": "failed",
  "run.cancelled": "cancelled",
  "run.quarantined": "quarantined",
  "run.released": "queued",
};

const isEventType = (kind: string): kind is WebhookEventType =>
  (WEBHOOK_EVENT_TYPES as readonly string[]).includes(kind);

/**
 * The webhook events among a run's entries `seqs`: one per entry of a subscribable kind. The
 * body is made from the journal alone (the entry, its commit time, the run's namespace), so the
 * same entry always makes the same bytes, whoever makes it.
 */
export function eventsOf(
  view: RunView,
  seqs: readonly number[],
  publicUrl: string,
): WebhookEvent[] {
  const started = view.journal[0];
  if (started?.kind !== "run.started") return [];
  const wanted = new Set(seqs);
  const events: WebhookEvent[] = [];
  for (const entry of view.journal) {
    if (!wanted.has(entry.seq) || !isEventType(entry.kind)) continue;
    const runId = view.projected.runId;
    const atUs = view.projected.committedUs.get(entry.seq) ?? entry.at * 1000;
    const payload: WebhookPayload = {
      type: entry.kind,
      timestamp: new Date(Math.floor(atUs / 1000)).toISOString(),
      data: {
        runId,
        namespace: started.namespace,
        status: STATUS_AFTER[entry.kind],
        links: { run: `${publicUrl.replace(/\/+$/, "")}/v1/runs/${encodeURIComponent(runId)}` },
      },
    };
    events.push({
      eventId: eventIdOf(runId, entry.seq),
      type: entry.kind,
      runId,
      seq: entry.seq,
      namespace: started.namespace,
      atUs,
      body: JSON.stringify(payload),
    });
  }
  return events;
}
