import type { CommittedActivation } from "@rewind/store";
import type { RunView } from "./span-model.js";

/** What a sink is handed: per run, the entries and activations committed in one window. */
export interface SinkBatch {
  runs: {
    view: RunView;
    /** Seqs of the run's entries in the window. */
    seqs: number[];
    activations: CommittedActivation[];
  }[];
}

/**
 * A projection of the journal (traces today; webhooks plug in the same way). `deliver` sends
 * everything the batch holds and resolves once the far side has it, or throws: the projector
 * then keeps its cursor and sends the batch again (at least once). What it sends for a batch
 * must depend on the batch alone, so a re-send is the same bytes.
 */
export interface Sink {
  readonly name: string;
  /** Answers how many items (spans, events) it delivered. */
  deliver(batch: SinkBatch): Promise<number>;
  close(): Promise<void>;
}
