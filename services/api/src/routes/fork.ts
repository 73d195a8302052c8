import { RewindError, newRunId, type JournalEntry, type RunStartedEntry } from "@rewind/core";
import type { z } from "zod";
import { ring } from "../doorbell.js";
import { defineRoute } from "../route.js";
import { startLimits, startRefused } from "../limits.js";
import { findRun } from "../run-view.js";
import { notFound } from "../errors.js";
import { DEFAULT_TTL_MS, ForkDryRun, ForkRunBody, ForkedRun, RunIdParams } from "@rewind/contract";
import { storeScript } from "./runs.js";
import { firstRedacted } from "@rewind/executor";

/**
 * A fork reuses its parent's entries as recorded: past an entry a capture policy redacted, it
 * would hand its script the marker where the parent's saw the value (docs/capture-policy.md).
 * Refused then (409), naming the seq; a fork whose reuse ends before it (a difference, or `at`)
 * runs live from there, with real values.
 */
function refuseRedactedReuse(
  parentId: string,
  journal: readonly JournalEntry[],
  reused: number,
): void {
  const redacted = firstRedacted(journal);
  // Reused entries are seq 2 … reused + 1 (run.started is the fork's own).
  if (redacted === undefined || reused + 1 < redacted.seq) return;
  throw new RewindError(
    "CONFLICT",
    `The fork would reuse entry ${redacted.seq} of run ${parentId}, which the capture policy ` +
      `redacted (${redacted.rules.join(", ")}): its script would get the marker instead of the ` +
      `value. Fork before it (at: ${redacted.seq}, rewind fork --at ${redacted.seq}) so that it runs live from there`,
    { runId: parentId, seq: redacted.seq, field: "body.at" },
  );
}

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
  errors: [401, 404, 409, 413, 422, 429, 503],
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
    refuseRedactedReuse(parent.id, parentJournal, preview.reused);
    if (body.dryRun === true) {
      void reply.code(200);
      return { dryRun: true, preview } satisfies z.input<typeof ForkDryRun>;
    }
    const limits = await startLimits(ctx, namespace);
    const outcome = await ctx.store.createRun({
      started,
      ttlMs: body.ttl ?? DEFAULT_TTL_MS,
      limits,
    });
    if ("refused" in outcome) throw startRefused(limits, outcome.refused, namespace);
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
