import { RunNoticeSubscriber, type RunNoticeOptions } from "@rewind/queue";
import { hop } from "@rewind/telemetry";
import { LocalRunChanges, type RunWatch } from "./run-changes.js";

/**
 * Change notices across processes (`rewind api` beside `rewind worker`s): a watch marks the run
 * watched in Redis before the caller reads the store, and the workers publish each group commit's
 * watched runs on the cluster's channel (see @rewind/queue's run-notices). Waiters in this process
 * are woken by the local map, as in `rewind dev`.
 */
export class RedisRunChanges extends LocalRunChanges {
  private subscriber: RunNoticeSubscriber | undefined;

  static async connect(options: RunNoticeOptions): Promise<RedisRunChanges> {
    const changes = new RedisRunChanges();
    changes.subscriber = await RunNoticeSubscriber.connect(options, (runIds) => {
      for (const runId of runIds) {
        hop("api.notice", runId);
        changes.notify(runId);
      }
    });
    return changes;
  }

  override async watch(runId: string, ms: number, endOnly = false): Promise<RunWatch> {
    // Listening here first, then the key: a notice can only be published once the key is set.
    const watch = this.open(runId);
    // A little past the wait: a commit in the last moments is still announced.
    await this.subscriber?.watch(runId, ms + 1_000, endOnly);
    return watch;
  }

  close(): void {
    this.subscriber?.close();
  }
}
