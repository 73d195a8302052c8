import { EPOCHS } from "@rewind/sandbox";
import { metrics, onScrape } from "@rewind/telemetry";

interface Backlog {
  backlog(epochs: readonly number[]): Promise<Map<number, number>>;
}

/**
 * Serves rewind_queue_backlog{epoch}: activations waiting for a worker of each released epoch,
 * read from Redis at each scrape (an autoscaler acting on a figure older than its scrape would
 * overshoot). It lives in the quarantine service because that one runs even when an epoch has no
 * worker at all, which is when scaling from zero needs the figure most. If Redis cannot be read,
 * the gauge shows nothing rather than a stale count. Returns a function that stops serving it.
 */
export function serveBacklog(queue: Backlog, epochs = EPOCHS.map((release) => release.epoch)) {
  return onScrape(async () => {
    let counts: Map<number, number>;
    try {
      counts = await queue.backlog(epochs);
    } catch (error) {
      metrics.queueBacklog.reset();
      throw error;
    }
    for (const [epoch, waiting] of counts)
      metrics.queueBacklog.set({ epoch: String(epoch) }, waiting);
  });
}
