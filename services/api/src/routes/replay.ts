import { z } from "zod";
import { checkReplay } from "@rewind/executor";
import { notFound } from "../errors.js";
import { apiSandbox } from "../sandbox.js";
import { defineRoute } from "../route.js";
import { findRun } from "../run-view.js";
import { CreateRunBody, RunIdParams } from "../schemas.js";
import { storeScript } from "./runs.js";

export const ReplayBody = z.strictObject({
  script: CreateRunBody.shape.script.optional().meta({
    description: "A corrected script to check against the run's history (default: the run's own)",
  }),
});

export const ReplayCheck = z.object({
  matches: z.boolean(),
  entries: z.number().int().optional(),
  message: z.string().optional(),
  divergence: z.record(z.string(), z.unknown()).optional(),
});

/**
 * Re-executes a script against a run's journal, calling nothing: does it match (or, with a
 * corrected script, is it compatible)? A divergence names the first differing entry.
 */
export const replayRun = defineRoute({
  method: "POST",
  path: "/v1/runs/:id/replay",
  operationId: "replayRun",
  summary: "Check the run's script, or a corrected one, against the run's journal",
  auth: true,
  params: RunIdParams,
  body: ReplayBody,
  responses: {
    200: { description: "Whether the script matches the journal", schema: ReplayCheck },
  },
  errors: [401, 404, 413, 422, 503],
  async handle({ params, body, namespace }, ctx) {
    const run = await findRun(ctx.store, namespace, params.id);
    const hash = body.script === undefined ? run.scriptHash : await storeScript(body.script, ctx);
    const script = await ctx.store.getScript(hash);
    if (script === undefined) throw notFound(`The script ${hash} is not stored`);
    const journal = await ctx.store.readJournal(run.id);
    const check = await checkReplay(apiSandbox(), script, journal);
    return (
      check.matches
        ? { matches: true, entries: check.entries }
        : { matches: false, message: check.message, divergence: { ...check.divergence } }
    ) satisfies z.input<typeof ReplayCheck>;
  },
});
