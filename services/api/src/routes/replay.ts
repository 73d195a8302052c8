import { z } from "zod";
import { failureVerdict, type ReplayCheck as Check } from "@rewind/executor";
import type { JournalEntry } from "@rewind/core";
import type { StoredScript } from "@rewind/store";
import type { ApiContext } from "../context.js";
import { notFound } from "../errors.js";
import { defineRoute } from "../route.js";
import { findRun } from "../run-view.js";
import {
  ReplayBatch,
  ReplayBatchBody,
  type ReplayBatchCheck,
  ReplayBody,
  ReplayCheck,
  RunIdParams,
} from "@rewind/contract";
import { storeScript } from "./runs.js";

/**
 * Re-executes a script against a run's journal, calling nothing: does it match (or, with a
 * corrected script, is it compatible)? A divergence names the first differing entry.
 */
export const replayRun = defineRoute({
  method: "POST",
  path: "/v1/runs/:id/replay",
  operationId: "replayRun",
  summary: "Check the run's script, or a corrected one, against the run's journal",
  access: "run",
  params: RunIdParams,
  body: ReplayBody,
  responses: {
    200: { description: "Whether the script matches the journal", schema: ReplayCheck },
  },
  errors: [401, 404, 413, 422, 500, 503],
  async handle({ params, body, namespace }, ctx) {
    const run = await findRun(ctx.store, namespace, params.id);
    const hash =
      body.script === undefined ? run.scriptHash : await storeScript(body.script, namespace, ctx);
    const script = await ctx.store.getScript(namespace, hash);
    if (script === undefined) throw notFound(`The script ${hash} is not stored`);
    const journal = await ctx.store.readJournal(run.id);
    return view(await ctx.replays.check(script, journal), journal);
  },
});

function view(check: Check, journal: readonly JournalEntry[]): z.input<typeof ReplayCheck> {
  return check.matches
    ? { matches: true, verdict: "matches", entries: check.entries }
    : {
        matches: false,
        verdict: failureVerdict(check, journal) ?? "incompatible",
        message: check.message,
        divergence: { ...check.divergence },
      };
}

/** Journals in memory at once per batch: enough to keep every replay thread busy. */
const IN_FLIGHT = 16;

/**
 * The replay check over many runs in one request: `rewind replay --all` gating a deploy on a
 * thousand open runs. One request per batch instead of one per run, and the replays spread over
 * the replay threads while this thread reads the next journals. A run that is not there (or not
 * in this namespace) is reported in its row, not as the batch's failure.
 */
export const replayRuns = defineRoute({
  method: "POST",
  path: "/v1/replay",
  operationId: "replayRuns",
  summary: "Check a script (or each run's own) against the journals of many runs",
  access: "run",
  body: ReplayBatchBody,
  responses: {
    200: {
      description: "One check per run named, in the order named",
      schema: ReplayBatch,
    },
  },
  errors: [401, 413, 422, 500, 503],
  async handle({ body, namespace }, ctx) {
    const given =
      body.script === undefined
        ? undefined
        : await loadScript(ctx, namespace, await storeScript(body.script, namespace, ctx));
    const scripts = new Map<string, Promise<StoredScript>>();
    const checkOne = async (runId: string): Promise<z.input<typeof ReplayBatchCheck>> => {
      const journal = await ctx.store.readJournal(runId);
      const started = journal[0];
      // The namespace is read from the journal itself: no run of another tenant is ever replayed.
      if (started?.kind !== "run.started" || started.namespace !== namespace)
        return {
          runId,
          matches: false,
          error: { code: "NOT_FOUND", message: `No run ${runId} in this namespace: check the id` },
        };
      let script = given;
      if (script === undefined) {
        const hash = started.scriptHash;
        if (!scripts.has(hash)) scripts.set(hash, loadScript(ctx, namespace, hash));
        script = await scripts.get(hash)!;
      }
      return { runId, ...view(await ctx.replays.check(script, journal), journal) };
    };
    const checks: z.input<typeof ReplayBatchCheck>[] = new Array(body.runs.length);
    let next = 0;
    const lane = async () => {
      while (next < body.runs.length) {
        const i = next++;
        checks[i] = await checkOne(body.runs[i]!);
      }
    };
    await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, body.runs.length) }, lane));
    return { checks };
  },
});

async function loadScript(ctx: ApiContext, namespace: string, hash: string): Promise<StoredScript> {
  const script = await ctx.store.getScript(namespace, hash);
  if (script === undefined) throw notFound(`The script ${hash} is not stored`);
  return script;
}
