import { PRESENCE_LIVE_MS } from "@rewind/executor";
import { EPOCHS, SUPPORTED_EPOCHS } from "@rewind/sandbox";
import type { z } from "zod";
import { EpochList, type EpochView } from "@rewind/contract";
import { defineRoute } from "../route.js";

/**
 * The determinism epochs this build knows and supports, with the namespace's live runs on each and
 * the live workers that run it: which epochs still need workers, and which runs wait for one.
 */
export const listEpochs = defineRoute({
  method: "GET",
  path: "/v1/epochs",
  operationId: "listEpochs",
  summary: "The determinism epochs this build supports, with the live runs on each",
  auth: true,
  responses: { 200: { description: "The epochs, oldest first", schema: EpochList } },
  errors: [401, 503],
  async handle({ namespace }, ctx) {
    const [counts, live] = await Promise.all([
      ctx.store.openRunsByEpoch(namespace),
      ctx.store.liveWorkers(PRESENCE_LIVE_MS),
    ]);
    const runs = new Map<number, z.input<typeof EpochView>["runs"]>();
    for (const { epoch, status, runs: n } of counts) {
      const entry = runs.get(epoch) ?? { open: 0, byStatus: {} };
      entry.open += n;
      entry.byStatus[status] = n;
      runs.set(epoch, entry);
    }
    // Its live workers, and the open runs that wait for one (a quarantined run waits for an
    // operator instead).
    const liveness = (epoch: number) => {
      const workers = live.filter((w) => w.epochs.includes(epoch)).length;
      const open = runs.get(epoch) ?? { open: 0, byStatus: {} };
      const needWorker = open.open - (open.byStatus.quarantined ?? 0);
      return { workers, waiting: workers === 0 ? needWorker : 0 };
    };
    const epochs: z.input<typeof EpochView>[] = EPOCHS.map((release) => ({
      epoch: release.epoch,
      known: true,
      supported: SUPPORTED_EPOCHS.includes(release.epoch),
      // The epoch this API starts new runs in (the newest its runtime serves: newRunEpoch).
      current: release.epoch === ctx.epoch,
      released: release.released,
      environment: release.environment,
      sandboxDigest: release.sandboxDigest,
      matchingDigest: release.matchingDigest,
      notes: release.notes,
      runs: runs.get(release.epoch) ?? { open: 0, byStatus: {} },
      ...liveness(release.epoch),
    }));
    // Runs on an epoch this build has never heard of (a newer build made them): say so.
    for (const [epoch, open] of runs)
      if (!EPOCHS.some((release) => release.epoch === epoch))
        epochs.push({
          epoch,
          known: false,
          supported: false,
          current: false,
          runs: open,
          ...liveness(epoch),
        });
    epochs.sort((a, b) => a.epoch - b.epoch);
    return { current: ctx.epoch, epochs } satisfies z.input<typeof EpochList>;
  },
});
