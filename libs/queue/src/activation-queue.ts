import type { FirstActivation } from "@rewind/core";

/** "Run R has something to process", and where that is best done. */
export interface Activation {
  runId: string;
  /** The run's determinism epoch: only workers that support it may replay it. */
  epoch: number;
  /** The worker holding the run hot (its lease owner), if any: its next activation goes there. */
  holder?: string;
  /**
   * How many times the run's lease was taken when it was rung: rings of one generation collapse
   * into one activation, and a later generation's ring is never swallowed by an activation a
   * dead worker left behind in the queue.
   */
  leases?: number;
  /** A new run's first ring: what its worker may begin with before reading the journal. */
  first?: FirstActivation;
}

/** How an activation reached its worker (ConsumeOptions.onTaken). */
export type Delivery = "sticky" | "direct" | "shared";

/** Handles one activation: the run, and its first ring's hint when it is one. */
export type ActivationHandler = (runId: string, first?: FirstActivation) => Promise<void>;

export interface ConsumeOptions {
  /**
   * Activations handled at once from each of the shared queues, and new runs handed straight to
   * this consumer (default 64).
   */
  concurrency?: number;
  /** The epochs this consumer supports: it takes activations from those epochs' queues only. */
  epochs?: readonly number[];
  /**
   * This consumer's name (its lease owner): activations of runs it holds hot come straight here,
   * and so do new runs of its epochs while it has room for them.
   */
  holder?: string;
  /**
   * How long an activation this consumer took stays claimed if the consumer vanishes mid-way
   * (a killed process renews nothing): until then, rings of the same run collapse into it. Give
   * it the run lease's length (default 30 s): a dead worker's runs cannot move before their
   * leases expire anyway, and a claim that outlives the lease only delays the takeover.
   */
  claimMs?: number;
  /**
   * Told as each activation is taken, before its handler runs: how it came (sticky: straight to
   * this holder; direct: a new run, straight to this worker; shared: from the epoch's queue) and
   * how long it waited since it was rung or, for a delayed ring, since it fell due (the
   * schedule-to-start a dashboard shows).
   */
  onTaken?: (runId: string, taken: { delivery: Delivery; waitedMs: number }) => void;
}

/**
 * The doorbell: "run R has something to process". Redis is a doorbell, not a store (the journal is the only source of truth):
 * a ring may be lost (a flushed Redis, a ring that lands while R is being activated) and nothing
 * is lost with it, because a reconciler re-rings every run whose inbox or timers are waiting and
 * every run whose owner is gone.
 */
export interface ActivationQueue {
  /** Asks for an activation of the run; rings while one is already waiting collapse into it. */
  ring(activation: Activation): Promise<void>;
  /** Starts handing activations to `handler`. */
  consume(handler: ActivationHandler, options?: ConsumeOptions): void;
  /**
   * Activations waiting for a worker, per epoch (the autoscalers' figure). Only a shared queue
   * has one: the embedded default's single process has nothing to scale.
   */
  backlog?(epochs: readonly number[]): Promise<Map<number, number>>;
  /** Takes no more activations (those being handled finish); rings still go out. */
  stopConsuming(): Promise<void>;
  close(): Promise<void>;
}

/** The embedded default: activations in this process, no Redis (one worker: no routing). */
export class InProcessQueue implements ActivationQueue {
  private handler: ActivationHandler | undefined;
  private readonly waiting = new Set<string>();
  private readonly queue: Pick<Activation, "runId" | "first">[] = [];
  private active = 0;
  private concurrency = 64;
  private closed = false;

  async ring({ runId, first }: Activation): Promise<void> {
    if (this.closed || this.waiting.has(runId)) return;
    this.waiting.add(runId);
    this.queue.push(first === undefined ? { runId } : { runId, first });
    this.pump();
  }

  consume(handler: ActivationHandler, options: ConsumeOptions = {}): void {
    this.handler = handler;
    this.concurrency = options.concurrency ?? 64;
    this.pump();
  }

  async stopConsuming(): Promise<void> {
    this.handler = undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.queue.length = 0;
    this.waiting.clear();
  }

  private pump(): void {
    while (this.handler !== undefined && this.active < this.concurrency && this.queue.length > 0) {
      const { runId, first } = this.queue.shift()!;
      this.waiting.delete(runId);
      this.active++;
      void this.handler(runId, first)
        .catch(() => {}) // the handler reports its own failures; the reconciler rings again
        .finally(() => {
          this.active--;
          this.pump();
        });
    }
  }
}
