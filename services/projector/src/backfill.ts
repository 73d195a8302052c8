import type { Store } from "@rewind/store";
import { loadRunView } from "./run-views.js";
import type { Sink } from "./sink.js";

/**
 * Re-runs a sink over whole runs, from their journals, without touching its cursor: the same
 * spans (ids and contents) as the first time, since they are made from the journal alone.
 */
export async function backfill(
  store: Store,
  sink: Sink,
  selection: { runIds: readonly string[] } | { since: Date },
): Promise<{ runs: number; delivered: number }> {
  const runIds =
    "runIds" in selection ? selection.runIds : await store.runsCommittedSince(selection.since);
  let delivered = 0;
  let runs = 0;
  for (const runId of runIds) {
    const view = await loadRunView(store, runId);
    if (view === undefined) continue;
    runs++;
    delivered += await sink.deliver({
      runs: [
        {
          view,
          seqs: view.journal.map((entry) => entry.seq),
          activations: view.projected.activations,
        },
      ],
    });
  }
  return { runs, delivered };
}
