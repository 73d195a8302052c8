import { newRunId, type RunStartedEntry } from "@rewind/core";
import type { z } from "zod";
import { ring } from "../doorbell.js";
import { defineRoute } from "../route.js";
import { checkStartLimits } from "../limits.js";
import { findRun } from "../run-view.js";
import { notFound } from "../errors.js";
import { DEFAULT_TTL_MS, ForkDryRun, ForkRunBody, ForkedRun, RunIdParams } from "@rewind/contract";
import { storeScript } from "./runs.js";

/**
 * A fork: a new run of a corrected script with its parent's seed, input and toolset. The worker
 * that first loads it replays the new script against the parent's history: while the calls
 * match, the recorded results are reused (no tool is called, callIds are kept); from the first
 * difference (or `at`) it runs live.
 */
export const forkRun = defineRoute({
  method: "POST",
  path: "/v1/runs/:id/fork",
  operationId: "forkRun",
  summary: "Fork a run with a corrected script, reusing its recorded calls while they match",
  access: "run",
  params: RunIdParams,
  body: ForkRunBody,
  responses: {
    201: {
      description: "The fork was stored",
      schema: ForkedRun,
      headers: { Location: "The fork's URL" },
    },
  },
  errors: [401, 404, 413, 422, 429, 503],
  async handle({ params, body, namespace, reply }, ctx) {
    const parent = await findRun(ctx.store, namespace, params.id);
    const parentJournal = await ctx.store.readJournal(parent.id);
    const origin = parentJournal[0] as RunStartedEntry;
    const scriptHash = await storeScript(body.script, namespace, ctx);
    const script = await ctx.store.getScript(namespace, scriptHash);
    if (script === undefined) throw notFound(`The script ${scriptHash} is not stored`);
    const started: RunStartedEntry = {
      seq: 1,
      kind: "run.started",
      at: origin.at, // the fork shares its parent's clock: reused entries keep their times
      runId: newRunId(),
      scriptHash,
      input: origin.input,
      seed: origin.seed,
      epoch: origin.epoch,
      toolset: origin.toolset,
      namespace,
      parent: { runId: parent.id, seq: body.at ?? 0 },
    };
    // Which tools are unsafe to repeat: the workers published their toolsets at start-up.
    const toolset = await ctx.store.getToolset(origin.toolset);
    const unsafe = toolset?.tools.filter((t) => t.unsafeToRepeat).map((t) => t.name);
    // The preview replays the script against the parent exactly as the fork's worker will.
    const preview = await ctx.replays.previewFork(script, started, parentJournal, body.at, unsafe);
    if (body.dryRun === true) {
      void reply.code(200);
      return { dryRun: true, preview } satisfies z.input<typeof ForkDryRun>;
    }
    await checkStartLimits(ctx, namespace);
    await ctx.store.createRun({ started, ttlMs: body.ttl ?? DEFAULT_TTL_MS });
    await ring(ctx, { runId: started.runId, epoch: started.epoch, leases: 0 });
    void reply.code(201).header("Location", `/v1/runs/${started.runId}`);
    return {
      id: started.runId,
      status: "queued",
      scriptHash,
      parent: started.parent!,
      preview,
    } satisfies z.input<typeof ForkedRun>;
  },
});
