import { createHash } from "node:crypto";
import { inCanonicalOrder, newRunId, newSeed, type Json, type RunStartedEntry } from "@rewind/core";
import type { z } from "zod";
import type { ApiContext } from "../context.js";
import { ring } from "../doorbell.js";
import { invalidInput } from "../errors.js";
import { checkScript, checkValue } from "../submission.js";
import { defineRoute } from "../route.js";
import { findRun, toRunView } from "../run-view.js";
import {
  CreateRunBody,
  CreatedRun,
  DEFAULT_TTL_MS,
  ListRunsQuery,
  RunIdParams,
  RunList,
  RunView,
} from "../schemas.js";

export const createRun = defineRoute({
  method: "POST",
  path: "/v1/runs",
  operationId: "createRun",
  summary: "Start a run of a script",
  description:
    "Stores the script (by the SHA-256 of its code) and the run with its first journal entry, then rings the doorbell. The run starts queued.",
  auth: true,
  body: CreateRunBody,
  responses: {
    201: {
      description: "The run was stored",
      schema: CreatedRun,
      headers: { Location: "The run's URL" },
    },
  },
  errors: [401, 413, 422, 503],
  async handle({ body, namespace, reply }, ctx) {
    checkValue(body.input, "body.input", ctx.maxValueBytes);
    const scriptHash = await storeScript(body.script, namespace, ctx);
    const input = canonicalInput(body.input);
    const runId = newRunId();
    const started: RunStartedEntry = {
      seq: 1,
      kind: "run.started",
      at: Date.now(),
      runId,
      scriptHash,
      input,
      seed: body.seed ?? newSeed(),
      epoch: ctx.epoch,
      toolset: body.toolset,
      namespace,
    };
    await ctx.store.createRun({ started, ttlMs: body.ttl ?? DEFAULT_TTL_MS });
    // The run is durable before the doorbell rings: a ring that fails is repaired by the reconciler.
    await ring(ctx, { runId, epoch: started.epoch, leases: 0 }); // never taken yet
    void reply.code(201).header("Location", `/v1/runs/${runId}`);
    return { id: runId, status: "queued", scriptHash } satisfies z.input<typeof CreatedRun>;
  },
});

export const listRuns = defineRoute({
  method: "GET",
  path: "/v1/runs",
  operationId: "listRuns",
  summary: "List the namespace's runs, newest first",
  auth: true,
  query: ListRunsQuery,
  responses: { 200: { description: "A page of runs", schema: RunList } },
  errors: [401, 422, 503],
  async handle({ query, namespace }, ctx) {
    // One more than asked: whether it exists says whether there is a next page.
    const runs = await ctx.store.listRuns({
      namespace,
      limit: query.limit + 1,
      ...(query.status !== undefined ? { status: query.status } : {}),
      ...(query.before !== undefined ? { before: query.before } : {}),
    });
    const page = runs.slice(0, query.limit).map(toRunView);
    const list: z.input<typeof RunList> = { runs: page };
    if (runs.length > query.limit) list.next = page[page.length - 1]!.id;
    return list;
  },
});

export const getRun = defineRoute({
  method: "GET",
  path: "/v1/runs/:id",
  operationId: "getRun",
  summary: "Show a run",
  auth: true,
  params: RunIdParams,
  responses: { 200: { description: "The run", schema: RunView } },
  errors: [401, 404, 422, 503],
  async handle({ params, namespace }, ctx) {
    return toRunView(await findRun(ctx.store, namespace, params.id));
  },
});

/**
 * The script's hash: a compiled script is stored in the caller's namespace (its hash computed
 * here); a hash must name a script of that namespace. Another namespace's script of the same hash
 * is invisible: knowing a hash grants nothing.
 */
export async function storeScript(
  script: z.output<typeof CreateRunBody>["script"],
  namespace: string,
  ctx: ApiContext,
) {
  if ("code" in script) {
    checkScript(script, "body.script");
    // The hash is the store's key: computed from the code, never taken from the client.
    const hash = `sha256:${createHash("sha256").update(script.code).digest("hex")}`;
    await ctx.store.putScript(namespace, {
      hash,
      entry: script.entry,
      code: script.code,
      sourceMap: script.sourceMap,
    });
    return hash;
  }
  if ((await ctx.store.getScript(namespace, script.hash)) === undefined) {
    throw invalidInput(
      "body.script.hash",
      `no script ${script.hash} is stored in this namespace: send the compiled script itself as { entry, code, sourceMap } (its hash is computed from the code)`,
    );
  }
  return script.hash;
}

function canonicalInput(input: unknown): Json {
  try {
    return inCanonicalOrder(input ?? null);
  } catch (error) {
    // Only numbers JSON.parse overflowed to Infinity get here: the body itself was JSON.
    throw invalidInput("body.input", `${(error as Error).message}`);
  }
}
