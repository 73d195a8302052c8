import { RewindError, type Json } from "@rewind/core";
import { ENDED_STATUSES, type RunRecord } from "@rewind/store";
import type { z } from "zod";
import { ring, routeOf } from "../doorbell.js";
import { redactAtTheDoor } from "../capture.js";
import { defineRoute } from "../route.js";
import { findRun } from "../run-view.js";
import { CancelBody, InboxAccepted, RunIdParams, SignalBody, SignalParams } from "@rewind/contract";
import { checkValue } from "../submission.js";

/*
 * Outside events go to the run's inbox, never straight into its journal: only the run's owner
 * appends to the journal, and it turns inbox items into entries in the order it delivers them.
 * A run that ends between the check below and the insert leaves an item its owner never consumes.
 */

export const sendSignal = defineRoute({
  method: "POST",
  path: "/v1/runs/:id/signals/:name",
  operationId: "sendSignal",
  summary: "Send a signal to an open run",
  description: "The body is the signal's payload (any JSON; an empty body is null).",
  access: "run",
  params: SignalParams,
  body: SignalBody,
  bodyOptional: true,
  responses: { 202: { description: "The signal is in the run's inbox", schema: InboxAccepted } },
  errors: [401, 404, 409, 413, 422, 503],
  async handle({ params, body, namespace, reply }, ctx) {
    checkValue(body, "body", ctx.maxValueBytes);
    const run = await findRun(ctx.store, namespace, params.id);
    refuseEnded(run, "signals go only to open runs (queued, running, waiting or quarantined)");
    // Redacted at the door: the inbox holds no secret, and the script gets the marker too.
    const payload = await redactAtTheDoor(
      ctx.store,
      namespace,
      run.toolset,
      (body ?? null) as Json,
    );
    const id = await ctx.store.addInbox(run.id, { kind: "signal", name: params.name, payload });
    await ring(ctx, routeOf(run));
    void reply.code(202);
    return { id } satisfies z.input<typeof InboxAccepted>;
  },
});

export const cancelRun = defineRoute({
  method: "POST",
  path: "/v1/runs/:id/cancel",
  operationId: "cancelRun",
  summary: "Cancel an open run",
  description: "The run's owner journals run.cancelled; GET the result to see it end.",
  access: "run",
  params: RunIdParams,
  body: CancelBody,
  bodyOptional: true,
  responses: { 202: { description: "The cancel is in the run's inbox", schema: InboxAccepted } },
  errors: [401, 404, 409, 413, 422, 503],
  async handle({ params, body, namespace, reply }, ctx) {
    const run = await findRun(ctx.store, namespace, params.id);
    refuseEnded(run, "only an open run can be cancelled");
    const payload: Json = body?.reason !== undefined ? { reason: body.reason } : null;
    const id = await ctx.store.addInbox(run.id, { kind: "cancel", payload });
    await ring(ctx, routeOf(run));
    void reply.code(202);
    return { id } satisfies z.input<typeof InboxAccepted>;
  },
});

function refuseEnded(run: RunRecord, rule: string): void {
  if (ENDED_STATUSES.has(run.status)) {
    throw new RewindError(
      "CONFLICT",
      `Run ${run.id} has already ended (status ${run.status}): ${rule}`,
      {
        runId: run.id,
      },
    );
  }
}
