import type { AddressPolicy } from "@rewind/core/outbound-address";
import type { AttemptOutcome, DueDelivery, Store } from "@rewind/store";
import { metrics } from "@rewind/telemetry";
import { sendDelivery } from "./send.js";
import { signatureHeader } from "./signature.js";

export interface DispatcherOptions {
  store: Store;
  policy: AddressPolicy;
  /** How often due deliveries are looked for when none was found. */
  pollMs: number;
  /** Attempts in flight at once. */
  concurrency: number;
  /** One attempt, from resolving the host to the end of the answer. */
  timeoutMs: number;
  maxResponseBytes: number;
  /** The first retry's delay; each next one doubles, up to `retryMaxMs`. */
  retryMs: number;
  retryMaxMs: number;
  /** Attempts of one schedule before it gives up (a redelivery starts a new schedule). */
  attempts: number;
  /** An endpoint whose every attempt failed for this long is disabled. */
  disableAfterMs: number;
  /** How long finished deliveries stay in the log (default 30 days). */
  keepLogMs?: number;
  log?: (line: string) => void;
}

/**
 * How long a finished attempt's outcome waits for the others in flight to be recorded with it: a
 * delivery's state lags its answer by this much at most.
 */
const RECORD_LINGER_MS = 20;

/**
 * Sends the delivery rows the webhook sink made (docs/webhooks.md). It claims due rows
 * (their next_attempt_at moves past the attempt's time bound, so a dispatcher killed mid-send
 * leaves them due again), sends each signed, and records what came back: delivered, or the next
 * attempt's time with exponential backoff, or given up. The retry timers are those rows, in
 * Postgres: a restart loses none. Several dispatchers may run (SKIP LOCKED claims).
 */
export class Dispatcher {
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private inFlight = 0;
  /** Outcomes waiting for the record under way to commit (recorded together next). */
  private readonly outcomes: {
    outcome: AttemptOutcome;
    resolve: (result: { disabled: boolean }) => void;
    reject: (error: Error) => void;
  }[] = [];
  private flushing = false;
  /** Slots a claim under way may fill: taken until its deliveries are launched. */
  private reserved = 0;
  /** Ends the record's wait for the other attempts in flight, once they all came back. */
  private allBack: (() => void) | undefined;

  constructor(private readonly options: DispatcherOptions) {}

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
  }

  /**
   * Keeps up to `concurrency` attempts in flight, claiming more as each one ends: a slow endpoint
   * holds one slot for its time bound, never a whole round. A record of outcomes claims the
   * slots it frees itself (flushOutcomes); this loop claims when it finds slots free otherwise.
   */
  private async run(): Promise<void> {
    const { store } = this.options;
    let prunedAt = 0;
    while (!this.stopped) {
      let claimed = 0;
      const free = this.claimable(this.inFlight);
      if (free > 0)
        try {
          // The log's retention, once a minute at most (a bounded delete each time).
          if (Date.now() - prunedAt > 60_000) {
            prunedAt = Date.now();
            await store.webhooks.pruneLog(this.options.keepLogMs ?? 30 * 86_400_000);
          }
          this.reserved += free;
          let due: DueDelivery[];
          try {
            due = await store.webhooks.claimDue(free, this.claimMs);
          } finally {
            this.reserved -= free;
          }
          claimed = due.length;
          this.launch(due);
        } catch (error) {
          this.options.log?.(`webhook dispatcher: ${(error as Error).message}`);
        }
      if ((claimed === 0 || this.claimable(this.inFlight) === 0) && !this.stopped)
        await this.sleep(this.options.pollMs);
    }
    // Attempts in flight end within their time bound; their outcomes are recorded.
    while (this.inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 10));
  }

  /**
   * The slots a claim may fill with `busy` attempts in flight: none unless half of them are free
   * at least (a claim is a commit of its own), and none once stopping.
   */
  private claimable(busy: number): number {
    const { concurrency } = this.options;
    const free = concurrency - busy - this.reserved;
    return !this.stopped && free >= Math.ceil(concurrency / 2) ? free : 0;
  }

  /** The claim outlives the attempt's bound: no second dispatcher sends it meanwhile. */
  private get claimMs(): number {
    return 2 * this.options.timeoutMs + 1_000;
  }

  /** An attempt for each claimed delivery, each holding a slot until its outcome is recorded. */
  private launch(due: readonly DueDelivery[]): void {
    for (const delivery of due) {
      this.inFlight++;
      void this.attempt(delivery)
        .catch((error: Error) =>
          this.options.log?.(`webhook ${delivery.eventId}: ${error.message} (sent again later)`),
        )
        .finally(() => {
          this.inFlight--;
          this.wake?.();
        });
    }
  }

  /**
   * Records an attempt's outcome with the others that end while a record is committing, or
   * soon after: one statement (and one fsync) for many deliveries, as the executor's group
   * commit does. The attempts of one claim end within a few milliseconds of each other; recorded
   * as each came back, they took five records a claim, and each record's round trip costs more
   * CPU than the sends it records.
   */
  private record(outcome: AttemptOutcome): Promise<{ disabled: boolean }> {
    return new Promise((resolve, reject) => {
      this.outcomes.push({ outcome, resolve, reject });
      if (this.outcomes.length >= this.inFlight) this.allBack?.();
      void this.flushOutcomes();
    });
  }

  /** Until every attempt in flight has come back, or RECORD_LINGER_MS at most. */
  private othersBack(): Promise<void> {
    if (this.outcomes.length >= this.inFlight) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, RECORD_LINGER_MS);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.allBack = done;
    }).finally(() => (this.allBack = undefined));
  }

  private async flushOutcomes(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.outcomes.length > 0) {
        await this.othersBack();
        const batch = this.outcomes.splice(0);
        // The slots this batch frees, claimed again by the statement that records it.
        const free = this.claimable(this.inFlight - batch.length);
        this.reserved += free;
        try {
          let recorded: Awaited<ReturnType<Store["webhooks"]["recordAttempts"]>>;
          try {
            recorded = await this.options.store.webhooks.recordAttempts(
              batch.map((b) => b.outcome),
              free > 0 ? { limit: free, claimMs: this.claimMs } : undefined,
            );
          } finally {
            this.reserved -= free;
          }
          // Launched before the batch's attempts let go of their slots: the loop, woken by
          // them, counts these as taken.
          this.launch(recorded.claimed);
          batch.forEach((b, i) => b.resolve(recorded.outcomes[i]!));
        } catch (error) {
          for (const b of batch) b.reject(error as Error);
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** The delay before the retry that follows `tries` failed attempts: doubling, ±20 % jitter. */
  retryDelay(tries: number): number {
    const { retryMs, retryMaxMs } = this.options;
    const base = Math.min(retryMs * 2 ** Math.min(tries, 40), retryMaxMs);
    return Math.round(base * (0.8 + Math.random() * 0.4));
  }

  private async attempt(delivery: DueDelivery): Promise<void> {
    const timestamp = Math.floor(Date.now() / 1000);
    const result = await sendDelivery(
      delivery.url,
      {
        "webhook-id": delivery.eventId,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signatureHeader(
          delivery.secrets,
          delivery.eventId,
          timestamp,
          delivery.body,
        ),
      },
      delivery.body,
      {
        policy: this.options.policy,
        timeoutMs: this.options.timeoutMs,
        maxResponseBytes: this.options.maxResponseBytes,
      },
    );
    const tries = delivery.tries + 1;
    const retryInMs =
      result.ok || tries >= this.options.attempts ? undefined : this.retryDelay(delivery.tries);
    const outcome = result.ok ? "delivered" : retryInMs === undefined ? "failed" : "retrying";
    const { disabled } = await this.record({
      deliveryId: delivery.id,
      endpointId: delivery.endpointId,
      attempt: delivery.attempt,
      ok: result.ok,
      ...(result.status !== undefined ? { status: result.status } : {}),
      ...(result.error !== undefined ? { error: result.error } : {}),
      ...(result.response !== undefined ? { response: result.response } : {}),
      durationMs: result.durationMs,
      ...(retryInMs !== undefined ? { retryInMs } : {}),
      disableAfterMs: this.options.disableAfterMs,
    });
    metrics.webhookDeliveries.inc({ outcome });
    metrics.webhookSeconds.observe({ outcome }, result.durationMs / 1000);
    if (!result.ok)
      this.options.log?.(
        `webhook ${delivery.eventId} to ${delivery.endpointId}, attempt ${delivery.attempt}: ${result.error ?? "failed"}` +
          (retryInMs === undefined
            ? " (given up)"
            : ` (again in ${Math.round(retryInMs / 1000)} s)`),
      );
    if (disabled) {
      metrics.webhookEndpointsDisabled.inc();
      this.options.log?.(`webhook endpoint ${delivery.endpointId} disabled: it kept failing`);
    }
  }
}
