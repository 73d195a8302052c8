import { createHash } from "node:crypto";
import type { FastifyReply } from "fastify";
import { parseTraceparent } from "@rewind/telemetry";
import {
  RewindError,
  canonicalize,
  firstActivationOf,
  inCanonicalOrder,
  newRunId,
  newSeed,
  type Json,
  type RunStartedEntry,
} from "@rewind/core";
import type { z } from "zod";
import type { RunsQuery } from "@rewind/store";
import { hop, hopClock } from "@rewind/telemetry";
import type { ApiContext } from "../context.js";
import { ring } from "../doorbell.js";
import { invalidInput } from "../errors.js";
import { checkScript, checkValue } from "../submission.js";
import { defineRoute } from "../route.js";
import { startLimits, startRefused } from "../limits.js";
import { ended, findRun, outcomeOf, replayability, toRunView } from "../run-view.js";
import { redactAtTheDoor } from "../capture.js";
import type { RunWatch } from "../run-changes.js";
import { readUntil, watchRun } from "../watch-run.js";
import {
  CreateRunBody,
  CreateRunQuery,
  CreatedRun,
  DEFAULT_TTL_MS,
  IdempotencyKey,
  ListRunsQuery,
  RepeatedRun,
  RunIdParams,
  RunList,
  RunView,
  WaitedRun,
} from "@rewind/contract";

export const createRun = defineRoute({
  method: "POST",
  path: "/v1/runs",
  operationId: "createRun",
  summary: "Start a run of a script",
  description:
    "Stores the script (by the SHA-256 of its code) and the run with its first journal entry, then rings the doorbell. The run starts queued.\n\n" +
    "**Retries.** Send an `Idempotency-Key` header (or `idempotencyKey` in the body; both must then be equal), up to 255 printable ASCII characters, to make the start safe to retry: the first start with a key answers 201; a start with the same key in the same namespace and the same request (script, input, toolset, seed if given) answers 200 with the same run (its status now) and starts nothing; the same key with another request answers 409 CONFLICT naming the key. A key stays taken as long as the run it started is kept (its TTL).\n\n" +
    "**Tracing.** A W3C `traceparent` header names the run's trace: its spans (docs/traces.md) carry that trace id, the run's span a child of the caller's. Without one (or with an invalid one, ignored) the trace id is derived from the run id.\n\n" +
    "**Start and wait.** With `wait` the answer comes when the run ends or the wait has passed, whichever is first, with its status and, once ended, its result or error (`ended`), as GET /v1/runs/:id/result would answer: one request instead of two for a client that starts a run to await it. The run is started all the same if the client goes away; a retry with the same Idempotency-Key and `wait` waits for that run.",
  access: "run",
  body: CreateRunBody,
  query: CreateRunQuery,
  responses: {
    201: {
      description:
        "The run was stored (queued); with `wait`, the run as it is at the answer, with its outcome if it ended",
      schema: CreatedRun.or(WaitedRun),
      headers: { Location: "The run's URL" },
    },
    200: {
      description:
        "A start with this Idempotency-Key and the same request was made before: its run, nothing new started (with `wait`: once it ended or the wait passed)",
      schema: RepeatedRun.or(WaitedRun),
      headers: { Location: "The run's URL" },
    },
  },
  errors: [401, 409, 413, 422, 429, 503],
  async handle(route, ctx) {
    // `route.signal` is read only by a start that waits: it is made when first asked for.
    const { body, query, namespace, request, reply } = route;
    const received = hopClock();
    checkValue(body.input, "body.input", ctx.maxValueBytes);
    const key = idempotencyKey(request.headers["idempotency-key"], body.idempotencyKey);
    const limits = await startLimits(ctx, namespace);
    const scriptHash = await storeScript(body.script, namespace, ctx);
    // Redacted at the door: the script gets the marker too, so the run stays replayable.
    const input = canonicalInput(
      await redactAtTheDoor(ctx.store, namespace, body.toolset, canonicalInput(body.input)),
    );
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
    const idempotency =
      key === undefined ? undefined : { key, digest: requestDigest(scriptHash, input, body) };
    // The request's trace names the run's trace (docs/traces.md); an invalid header is ignored.
    const traceparent = parseTraceparent(request.headers.traceparent)?.header;
    const waitMs = query.wait ?? 0;
    const deadline = Date.now() + waitMs;
    // Watched while it is stored, before it is rung: none of its commits can come unheard, and
    // the first read after the start waits for a notice (it is known to be queued).
    const watching = waitMs > 0 ? ctx.changes.watch(runId, waitMs, true) : undefined;
    let watch: RunWatch | undefined;
    try {
      const outcome = await ctx.store.createRun({
        started,
        ttlMs: body.ttl ?? DEFAULT_TTL_MS,
        limits,
        ...(idempotency !== undefined ? { idempotency } : {}),
        ...(traceparent !== undefined ? { traceparent } : {}),
      });
      if ("refused" in outcome) throw startRefused(limits, outcome.refused, namespace);
      if (!outcome.created) {
        const repeated = await repeatedStart(ctx, namespace, idempotency!, outcome, reply);
        if (waitMs <= 0) return repeated;
        const run = await watchRun(
          ctx,
          namespace,
          repeated.id,
          deadline - Date.now(),
          route.signal,
          ended,
          true,
        );
        return { ...repeated, ...outcomeOf(run) } satisfies z.input<typeof WaitedRun>;
      }
      hop("api.received", runId, received);
      hop("api.inserted", runId);
      watch = await watching;
      // The run is durable before the doorbell rings: a ring that fails is repaired by the reconciler.
      // Never taken yet: its worker makes the sandbox context while it reads the journal, or,
      // with the start in the clear, runs it at once and takes the lease in its first commit.
      await ring(ctx, {
        runId,
        epoch: started.epoch,
        leases: 0,
        first: firstActivationOf(started, { inClear: outcome.inClear, traceparent }),
      });
      hop("api.rung", runId);
      void reply.code(201).header("Location", `/v1/runs/${runId}`);
      if (watch === undefined)
        return { id: runId, status: "queued", scriptHash } satisfies z.input<typeof CreatedRun>;
      const run = await readUntil(ctx, watch, {
        namespace,
        runId,
        deadline,
        signal: route.signal,
        settled: ended,
      });
      return { id: runId, scriptHash, ...outcomeOf(run) } satisfies z.input<typeof WaitedRun>;
    } finally {
      (watch ?? (await watching?.catch(() => undefined)))?.close();
    }
  },
});

export const listRuns = defineRoute({
  method: "GET",
  path: "/v1/runs",
  operationId: "listRuns",
  summary: "List the namespace's runs, filtered, newest (or oldest) first",
  description:
    "Every filter given narrows the list. Pages follow `next`: pass it as `before` (newest first, the default) or `after` (with `order=oldest`). " +
    "With `counts=true` the answer also holds the runs all filters but `status` find, by status, over every page.",
  access: "read",
  query: ListRunsQuery,
  responses: { 200: { description: "A page of runs", schema: RunList } },
  errors: [401, 422, 503],
  async handle({ query, namespace }, ctx) {
    if (query.before !== undefined && query.after !== undefined)
      throw invalidInput("query.after", "cannot be given with `before`: page one way at a time");
    const oldest = query.order === "oldest";
    const cursor = oldest ? query.before : query.after;
    if (cursor !== undefined)
      throw invalidInput(
        oldest ? "query.before" : "query.after",
        `pages the other way: with order=${query.order} pass \`next\` as \`${oldest ? "after" : "before"}\``,
      );
    const filter: RunsQuery = {
      namespace,
      ...definedOnly({
        status: query.status,
        script: query.script,
        toolset: query.toolset,
        epoch: query.epoch,
        createdFrom: query.createdFrom,
        createdTo: query.createdTo,
        parent: query.parent,
        fork: query.fork,
        text: query.q,
      }),
    };
    // One more than asked: whether it exists says whether there is a next page.
    const [runs, counts] = await Promise.all([
      ctx.store.listRuns({
        ...filter,
        order: query.order,
        limit: query.limit + 1,
        ...definedOnly({ before: query.before, after: query.after }),
      }),
      query.counts ? ctx.store.countRuns(filter) : undefined,
    ]);
    const page = runs.slice(0, query.limit).map(toRunView);
    const list: z.input<typeof RunList> = { runs: page };
    if (runs.length > query.limit) list.next = page[page.length - 1]!.id;
    if (counts !== undefined) list.counts = counts;
    return list;
  },
});

/** The object without its undefined fields (exactOptionalPropertyTypes wants them absent). */
function definedOnly<T extends Record<string, unknown>>(object: T) {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

export const getRun = defineRoute({
  method: "GET",
  path: "/v1/runs/:id",
  operationId: "getRun",
  summary: "Show a run",
  access: "read",
  params: RunIdParams,
  responses: { 200: { description: "The run", schema: RunView } },
  errors: [401, 404, 422, 503],
  async handle({ params, namespace }, ctx) {
    const run = await findRun(ctx.store, namespace, params.id);
    return { ...toRunView(run), ...replayability(await ctx.store.firstRedacted(run.id)) };
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

/** The key from the header or the body (equal if both), checked as the body's field would be. */
function idempotencyKey(header: string | string[] | undefined, field: string | undefined) {
  if (Array.isArray(header))
    throw invalidInput("headers.idempotency-key", "must be sent once: send one Idempotency-Key");
  if (header === undefined) return field;
  const parsed = IdempotencyKey.safeParse(header);
  if (!parsed.success)
    throw invalidInput("headers.idempotency-key", parsed.error.issues[0]?.message ?? "is invalid");
  if (field !== undefined && field !== header)
    throw invalidInput(
      "body.idempotencyKey",
      `differs from the Idempotency-Key header (${header}): send the key once, or the same in both`,
    );
  return header;
}

/**
 * What a start asks for, as a digest: a repeat with the same key must ask for the same. The seed
 * counts only when the client chose it (else each attempt draws its own), the TTL not at all.
 */
function requestDigest(scriptHash: string, input: Json, body: { toolset: string; seed?: string }) {
  const request = { scriptHash, input, toolset: body.toolset, seed: body.seed ?? null };
  return createHash("sha256").update(canonicalize(request)).digest("hex");
}

/** A start made before with this key: the same run if the same request, else a conflict. */
async function repeatedStart(
  ctx: ApiContext,
  namespace: string,
  { key, digest }: { key: string; digest: string },
  outcome: { runId: string; digest: string },
  reply: FastifyReply,
) {
  if (outcome.digest !== digest) {
    throw new RewindError(
      "CONFLICT",
      `Idempotency key ${key} already started run ${outcome.runId} with another request (script, input, toolset or seed): use a new key for a different run, or send the same request to get that run`,
    );
  }
  const run = await findRun(ctx.store, namespace, outcome.runId);
  void reply.code(200).header("Location", `/v1/runs/${run.id}`);
  return { id: run.id, status: run.status, scriptHash: run.scriptHash } satisfies z.input<
    typeof RepeatedRun
  >;
}

function canonicalInput(input: unknown): Json {
  try {
    return inCanonicalOrder(input ?? null);
  } catch (error) {
    // Only numbers JSON.parse overflowed to Infinity get here: the body itself was JSON.
    throw invalidInput("body.input", `${(error as Error).message}`);
  }
}
