import type { Store } from "@rewind/store";

/** How often a worker says it is alive; the API counts it live for three times as long. */
export const PRESENCE_EVERY_MS = 5_000;
export const PRESENCE_LIVE_MS = 3 * PRESENCE_EVERY_MS;

/**
 * Says in the store, now and every few seconds, that this worker is alive and which epochs it
 * runs: what the API counts to tell which epochs have no worker (their runs wait). A missed beat
 * (the database restarting) is only a late one. `stop` deletes the row: a graceful exit.
 */
export async function announceWorker(
  store: Store,
  owner: string,
  epochs: readonly number[],
  everyMs = PRESENCE_EVERY_MS,
): Promise<{ stop(): Promise<void> }> {
  await store.workerSeen(owner, epochs);
  const timer = setInterval(() => void store.workerSeen(owner, epochs).catch(() => {}), everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await store.workerGone(owner).catch(() => {});
    },
  };
}
