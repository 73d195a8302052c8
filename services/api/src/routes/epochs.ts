import { RewindError } from "@rewind/core";
import { PRESENCE_LIVE_MS } from "@rewind/executor";
import { EPOCHS, SUPPORTED_EPOCHS, findEpoch, isDraft, runtimeOf } from "@rewind/sandbox";
import type { EpochCheck } from "@rewind/store";
import type { z } from "zod";
import {
  EpochCheckParams,
  EpochCheckView,
  EpochList,
  EpochParams,
  MigrateBody,
  type EpochView,
} from "@rewind/contract";
import { callerOf } from "../auth.js";
import { invalidInput, notFound } from "../errors.js";
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
  access: "read",
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
      const serving = live.filter((w) => w.epochs.includes(epoch));
      const workers = serving.length;
      const open = runs.get(epoch) ?? { open: 0, byStatus: {} };
      const needWorker = open.open - (open.byStatus.quarantined ?? 0);
      return {
        workers,
        liveWorkers: serving.map((w) => ({ owner: w.owner, seenAt: w.seenAt.toISOString() })),
        waiting: workers === 0 ? needWorker : 0,
      };
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

/** The check's state, as the API answers it. */
function toCheckView(check: EpochCheck): z.input<typeof EpochCheckView> {
  return {
    id: check.id,
    from: check.from,
    to: check.to,
    dryRun: check.dryRun,
    requestedBy: check.requestedBy,
    requestedAt: check.requestedAt.toISOString(),
    state: check.finishedAt !== null ? "done" : check.takenBy !== null ? "checking" : "pending",
    ...(check.takenBy === null ? {} : { takenBy: check.takenBy }),
    ...(check.finishedAt === null ? {} : { finishedAt: check.finishedAt.toISOString() }),
    ...(check.report === null
      ? {}
      : {
          checkedBy: check.report.checkedBy,
          runtime: check.report.runtime,
          runs: check.report.runs,
        }),
  };
}

/**
 * Asks to move the namespace's open runs of one epoch onto another. The API only records the
 * request: a worker of the target epoch replays each run there, on that runtime with its guest
 * runtime (never in the API's process, whose Node may be any), and moves those that match.
 */
export const migrateEpoch = defineRoute({
  method: "POST",
  path: "/v1/epochs/:epoch/migrate",
  operationId: "migrateEpoch",
  summary: "Check the open runs of an epoch on another, and move those that replay the same",
  description:
    "A worker of the target epoch replays each open run of the epoch, calling nothing. A run that matches moves (unless dryRun), only if its journal still ends at the seq checked; one that diverges stays for its epoch's workers. Poll GET /v1/epochs/checks/{id} for the verdicts.",
  access: "operate",
  params: EpochParams,
  body: MigrateBody,
  responses: {
    202: {
      description: "Asked: a worker of the target epoch does the check",
      schema: EpochCheckView,
    },
  },
  errors: [401, 403, 409, 422, 503],
  async handle({ params, body, namespace, grant, reply }, ctx) {
    const from = params.epoch;
    const to = body.to;
    if (from === to) throw invalidInput("body.to", `the runs are of epoch ${from} already`);
    const target = findEpoch(to);
    if (target === undefined || !SUPPORTED_EPOCHS.includes(to))
      throw invalidInput(
        "body.to",
        `epoch ${to} is not one this build supports (${SUPPORTED_EPOCHS.join(", ")}): see GET /v1/epochs`,
      );
    if (isDraft(target) && !body.allowDraft)
      throw invalidInput(
        "body.to",
        `epoch ${to} is a draft (not released): runs moved onto it may not replay on the build that ` +
          `releases it. Move them once it is released, or pass allowDraft to try it out`,
      );
    const live = await ctx.store.liveWorkers(PRESENCE_LIVE_MS);
    if (!live.some((worker) => worker.epochs.includes(to)))
      throw new RewindError(
        "CONFLICT",
        `No live worker runs epoch ${to}: the check replays the runs on one of them (on its runtime, ` +
          `${runtimeOf(target)}). Start a worker of that runtime, then ask again`,
      );
    const check = await ctx.store.requestEpochCheck({
      namespace,
      from,
      to,
      requestedBy: callerOf(grant!),
      dryRun: body.dryRun,
    });
    void reply.code(202);
    return toCheckView(check);
  },
});

export const showEpochCheck = defineRoute({
  method: "GET",
  path: "/v1/epochs/checks/:id",
  operationId: "getEpochCheck",
  summary: "An epoch check's state and, once done, the verdict on each run",
  access: "read",
  params: EpochCheckParams,
  responses: { 200: { description: "The check", schema: EpochCheckView } },
  errors: [401, 404, 422, 503],
  async handle({ params, namespace }, ctx) {
    const check = await ctx.store.getEpochCheck(namespace, params.id);
    if (check === undefined) throw notFound(`No epoch check ${params.id} in this namespace`);
    return toCheckView(check);
  },
});
