import { z } from "zod";
import { notFound } from "../errors.js";
import { defineRoute } from "../route.js";
import { findRun } from "../run-view.js";
import { RunIdParams, RunScript } from "@rewind/contract";

/**
 * A run's script, for checks that re-execute it locally (`rewind replay <run>`). Reached through
 * the run, so a namespace sees only the scripts of its own runs.
 */
export const getRunScript = defineRoute({
  method: "GET",
  path: "/v1/runs/:id/script",
  operationId: "getRunScript",
  summary: "The compiled script of a run (with its source map)",
  access: "read",
  params: RunIdParams,
  responses: { 200: { description: "The script", schema: RunScript } },
  errors: [401, 404, 503],
  async handle({ params, namespace }, ctx) {
    const run = await findRun(ctx.store, namespace, params.id);
    const script = await ctx.store.getScript(run.namespace, run.scriptHash);
    if (script === undefined)
      throw notFound(`The script ${run.scriptHash} of run ${run.id} is not stored`);
    return script satisfies z.input<typeof RunScript>;
  },
});
