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
 * A projection of the journal (traces, webhooks). `deliver` sends
 * everything the batch holds and resolves once the far side has it, or throws: the projector
 * then keeps its cursor and sends the batch again (at least once). What it sends for a batch
 * must depend on the batch alone, so a re-send is the same bytes.
 */
export interface Sink {
  readonly name: string;
  /**
   * The entry kinds it projects, when not all: a window's other entries (and its activations)
   * are not handed to it, and a run with none of these kinds in the window is not even read.
   * A long run's window otherwise costs a read of its whole journal (20,000 timers: 100 windows
   * of it), for a sink that wants only how it ends.
   */
  readonly kinds?: ReadonlySet<string>;
  /** Answers how many items (spans, events) it delivered. */
  deliver(batch: SinkBatch): Promise<number>;
  /**
   * A sink whose delivery is rows in the store (webhooks) writes them in the transaction that
   * moves its cursor from `from` to `to` instead: exactly once, where `deliver` is at least once.
   * Without it, the projector moves the cursor after `deliver`. `deliver` is then a backfill's.
   * Answers undefined when the cursor was no longer at `from` (another projector moved it).
   */
  deliverWithCursor?(
    batch: SinkBatch,
    cursor: { from: bigint; to: bigint },
  ): Promise<number | undefined>;
  close(): Promise<void>;
}
