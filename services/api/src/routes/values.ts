import { RunValue, RunValueParams } from "@rewind/contract";
import type { z } from "zod";
import { notFound } from "../errors.js";
import { defineRoute } from "../route.js";
import { findRun } from "../run-view.js";

/**
 * One value of a run, by the reference a journal page deferred it under: a viewer lists a run's
 * journal without its large values, and reads each (from the blob store) when it is opened.
 * Reached through the run, and only for a value the run holds, so a namespace reads only its own.
 */
export const getRunValue = defineRoute({
  method: "GET",
  path: "/v1/runs/:id/values/:ref",
  operationId: "getRunValue",
  summary: "One value of a run, by its reference (one a journal page deferred)",
  access: "read",
  params: RunValueParams,
  responses: { 200: { description: "The value", schema: RunValue } },
  errors: [401, 404, 422, 503],
  async handle({ params, namespace }, ctx) {
    const run = await findRun(ctx.store, namespace, params.id);
    const value = await ctx.store.readRunValue(run.id, params.ref);
    if (value === undefined)
      throw notFound(
        `Run ${run.id} holds no value ${params.ref}: take the ref from its journal page's deferred values (GET /v1/runs/${run.id}/journal?values=deferred)`,
      );
    return { ref: params.ref, value } satisfies z.input<typeof RunValue>;
  },
});
