import { WEBHOOK_EVENT_TYPES } from "@rewind/contract";
import type { Store } from "@rewind/store";
import type { Sink, SinkBatch } from "../sink.js";
import { eventsOf } from "./events.js";

/**
 * The webhook sink: turns each subscribable entry (run.completed, run.failed, …) of a window into
 * one delivery row per matching endpoint, in the transaction that moves its cursor, so an event
 * is neither lost nor doubled; the dispatcher sends the rows (dispatcher.ts).
 */
export class WebhookSink implements Sink {
  readonly name = "webhooks";
  /** Only the entries an event is made of: a run's other entries are never read for it. */
  readonly kinds: ReadonlySet<string> = new Set(WEBHOOK_EVENT_TYPES);

  constructor(
    private readonly store: Store,
    /** Where the payload's links point: the API as clients reach it. */
    private readonly publicUrl: string,
  ) {}

  private events(batch: SinkBatch) {
    return batch.runs.flatMap((run) => eventsOf(run.view, run.seqs, this.publicUrl));
  }

  deliverWithCursor(batch: SinkBatch, cursor: { from: bigint; to: bigint }) {
    return this.store.webhooks.recordEvents(this.events(batch), { sink: this.name, ...cursor });
  }

  /** A backfill: makes the deliveries an event lacks (one it has is kept), cursor untouched. */
  async deliver(batch: SinkBatch): Promise<number> {
    return (await this.store.webhooks.recordEvents(this.events(batch))) ?? 0;
  }

  async close(): Promise<void> {}
}
