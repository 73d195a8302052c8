import { RewindError, type Json, type JournalEntry } from "@rewind/core";
import { EPOCHS, findEpoch, isDraft } from "@rewind/sandbox";
import type { QuarantineAction as Action, QuarantinedRun, RunRecord } from "@rewind/store";
import type { z } from "zod";
import { callerOf } from "../auth.js";
import type { ApiContext } from "../context.js";
import { invalidInput } from "../errors.js";
import {
  GiveUpBody,
  QuarantineAction,
  QuarantineDetail,
  QuarantineList,
  QuarantineListQuery,
  ReleaseBody,
  type QuarantineEvent,
  type QuarantineSummary,
} from "@rewind/contract";
import { defineRoute, type RouteInput } from "../route.js";
import { findRun, toRunView } from "../run-view.js";
import { ResultQuery, RunIdParams } from "@rewind/contract";
import { watchRun } from "../watch-run.js";

/*
 * Operators' side of quarantine. The API never appends to a journal: a release or a give-up is
 * a request in the run's inbox, which the quarantine service (holding the run's lease) turns
 * into run.released or run.failed. Both are idempotent: asking again changes nothing and answers
 * with the current state.
 */

/** How long an action waits for the quarantine service before answering 202 (default of `wait`). */
const ACTION_WAIT_MS = 5_000;

export const listQuarantine = defineRoute({
  method: "GET",
  path: "/v1/quarantine",
  operationId: "listQuarantine",
  summary: "List the namespace's quarantined runs, newest first, with their reports' summaries",
  access: "read",
  query: QuarantineListQuery,
  responses: { 200: { description: "A page of quarantined runs", schema: QuarantineList } },
  errors: [401, 422, 503],
  async handle({ query, namespace }, ctx) {
    const runs = await ctx.store.listQuarantined({
      namespace,
      limit: query.limit + 1,
      ...(query.before !== undefined ? { before: query.before } : {}),
    });
    const page = runs.slice(0, query.limit).map(summarize);
    const list: z.input<typeof QuarantineList> = { runs: page };
    if (runs.length > query.limit) list.next = page[page.length - 1]!.id;
    return list;
  },
});

export const showQuarantine = defineRoute({
  method: "GET",
  path: "/v1/quarantine/:id",
  operationId: "getQuarantine",
  summary: "Show a run's quarantine: its whole report while quarantined, and its history",
  access: "read",
  params: RunIdParams,
  responses: { 200: { description: "The run's quarantine", schema: QuarantineDetail } },
  errors: [401, 404, 422, 503],
  async handle({ params, namespace }, ctx) {
    const run = await findRun(ctx.store, namespace, params.id);
    const journal = await ctx.store.readJournal(run.id);
    const detail: z.input<typeof QuarantineDetail> = {
      run: toRunView(run),
      quarantined: run.status === "quarantined",
      history: history(journal),
    };
    const last = journal.at(-1);
    if (run.status === "quarantined" && last?.kind === "run.quarantined") {
      const pending = await ctx.store.pendingQuarantineRequests(100, [run.id]);
      detail.current = summarize({ run, seq: last.seq, at: last.at, report: last.report, pending });
      detail.report = last.report as Record<string, unknown>;
    }
    return detail;
  },
});

export const releaseRun = defineRoute({
  method: "POST",
  path: "/v1/quarantine/:id/release",
  operationId: "releaseRun",
  summary: "Release a quarantined run: replay it on its own epoch, or on the one given",
  description:
    "The quarantine service journals run.released (who, which epoch) and the run's workers take it over. Idempotent: a run already released is answered as it is.",
  access: "operate",
  params: RunIdParams,
  query: ResultQuery,
  body: ReleaseBody,
  bodyOptional: true,
  responses: {
    200: {
      description: "Released (state done), or released before (unchanged)",
      schema: QuarantineAction,
    },
    202: {
      description: "Asked: the quarantine service has not acted yet",
      schema: QuarantineAction,
    },
  },
  errors: [401, 404, 409, 422, 503],
  async handle(input, ctx) {
    const epoch = input.body?.epoch;
    // A draft epoch (not released) is no place to move a run to: its runtime may still change.
    const release = epoch === undefined ? undefined : findEpoch(epoch);
    if (epoch !== undefined && (release === undefined || isDraft(release)))
      throw invalidInput(
        "body.epoch",
        `epoch ${epoch} has not been released (released epochs: ${EPOCHS.filter((e) => !isDraft(e))
          .map((e) => e.epoch)
          .join(", ")}): see GET /v1/epochs`,
      );
    await refuseNotReplayable(ctx, input.namespace, input.params.id);
    return act(ctx, input, "release", epoch === undefined ? {} : { epoch });
  },
});

/**
 * A run held because a capture policy redacted what its replay needs (docs/capture-policy.md)
 * would only be held again on release: say so, and what works instead.
 */
async function refuseNotReplayable(ctx: ApiContext, namespace: string, id: string): Promise<void> {
  const run = await findRun(ctx.store, namespace, id);
  if (run.status !== "quarantined") return;
  const redacted = await ctx.store.firstRedacted(run.id);
  if (redacted === undefined) return;
  throw new RewindError(
    "CONFLICT",
    `Run ${run.id} is not strictly replayable: its entry ${redacted.seq} was redacted by the ` +
      `capture policy (${redacted.rules.join(", ")}), so a release would replay it on markers and ` +
      `hold it again. Give up on it (POST /v1/quarantine/${run.id}/give-up), or fork it before ` +
      `that entry (at: ${redacted.seq})`,
    { runId: run.id, seq: redacted.seq },
  );
}

export const giveUpRun = defineRoute({
  method: "POST",
  path: "/v1/quarantine/:id/give-up",
  operationId: "giveUpRun",
  summary: "Give up on a quarantined run: it fails (code GIVEN_UP) with the reason",
  description:
    "The quarantine service journals run.failed with who gave up and why. Idempotent: a run already given up is answered as it is.",
  access: "operate",
  params: RunIdParams,
  query: ResultQuery,
  body: GiveUpBody,
  bodyOptional: true,
  responses: {
    200: {
      description: "Given up (state done), or given up before (unchanged)",
      schema: QuarantineAction,
    },
    202: {
      description: "Asked: the quarantine service has not acted yet",
      schema: QuarantineAction,
    },
  },
  errors: [401, 404, 409, 422, 503],
  async handle(input, ctx) {
    const reason = input.body?.reason;
    return act(ctx, input, "give-up", reason === undefined ? {} : { reason });
  },
});

type ActionInput = Pick<
  RouteInput<z.output<typeof RunIdParams>, z.output<typeof ResultQuery>, unknown>,
  "params" | "query" | "namespace" | "grant" | "request" | "reply" | "signal"
>;

async function act(
  ctx: ApiContext,
  input: ActionInput,
  action: Action,
  details: { epoch?: number; reason?: string },
): Promise<z.input<typeof QuarantineAction>> {
  const { namespace, params } = input;
  let run = await findRun(ctx.store, namespace, params.id);
  if (run.status !== "quarantined") return settled(ctx, run, action);
  // Nothing is appended after run.quarantined while a run is held: its last seq names this quarantine.
  const quarantineSeq = run.lastSeq;
  const pending = (await ctx.store.pendingQuarantineRequests(100, [run.id])).filter(
    (r) => r.quarantineSeq === quarantineSeq,
  );
  const epochOf = (epoch: number | undefined) => epoch ?? run.epoch;
  const other = pending.find(
    (r) => r.action !== action || epochOf(r.epoch) !== epochOf(details.epoch),
  );
  if (other !== undefined)
    throw new RewindError(
      "CONFLICT",
      `A ${other.action}${other.epoch === undefined ? "" : ` onto epoch ${other.epoch}`} of run ${run.id} ` +
        `is already pending (asked by ${other.by}): the quarantine service acts on the oldest request; ask again once it has`,
      { runId: run.id },
    );
  let id = pending.find((r) => r.action === action)?.id;
  if (id === undefined) {
    const by = callerOf(input.grant!);
    id = await ctx.store.addQuarantineRequest(run.id, { action, quarantineSeq, by, ...details });
    ctx.onQuarantineRequest?.(run.id);
  }
  run = await watchRun(
    ctx,
    namespace,
    run.id,
    input.query.wait ?? ACTION_WAIT_MS,
    input.signal,
    // Acted on: an entry follows run.quarantined (the run may already be running, or held again).
    (r) => r.lastSeq > quarantineSeq,
  );
  if (run.lastSeq <= quarantineSeq) {
    void input.reply.code(202);
    return {
      action,
      state: "pending",
      message:
        `Asked. The quarantine service has not acted on it yet: it will when it runs ` +
        `(\`rewind quarantine-service\`, or within \`rewind dev\`). Ask again to see the outcome`,
      run: toRunView(run),
      request: { id },
    };
  }
  const [entry] = await ctx.store.readJournal(run.id, quarantineSeq + 1);
  return {
    action,
    state: "done",
    message: entry === undefined ? `Run ${run.id} is ${run.status}` : describe(run, entry),
    run: toRunView(run),
    request: { id },
  };
}

/** A run not (or no longer) quarantined: answered as it is, or refused if the action no longer fits. */
async function settled(
  ctx: ApiContext,
  run: RunRecord,
  action: Action,
): Promise<z.input<typeof QuarantineAction>> {
  const journal = await ctx.store.readJournal(run.id);
  const quarantined = journal.findLast((entry) => entry.kind === "run.quarantined");
  const after = quarantined === undefined ? undefined : journal[quarantined.seq];
  const sameDone =
    action === "release"
      ? after?.kind === "run.released"
      : after?.kind === "run.failed" && after.error.code === "GIVEN_UP";
  if (after !== undefined && sameDone)
    return { action, state: "unchanged", message: describe(run, after), run: toRunView(run) };
  const what = action === "release" ? "released" : "given up on";
  const instead =
    after?.kind === "run.released"
      ? `it was released (${describe(run, after)}): cancel it instead`
      : after !== undefined
        ? `it has ended (${describe(run, after)}): fork it to carry its work on`
        : "only a quarantined run can be";
  throw new RewindError(
    "CONFLICT",
    `Run ${run.id} is ${run.status}, not quarantined, so it cannot be ${what}: ${instead}`,
    { runId: run.id },
  );
}

function describe(run: RunRecord, entry: JournalEntry): string {
  switch (entry.kind) {
    case "run.released":
      return `released by ${entry.by} onto epoch ${entry.epoch ?? run.epoch} at seq ${entry.seq}; the run is now ${run.status}`;
    case "run.failed":
      return entry.error.code === "GIVEN_UP"
        ? `given up by ${entry.by ?? "an operator"} at seq ${entry.seq}: ${entry.error.message}`
        : `failed at seq ${entry.seq}: ${entry.error.message}`;
    default:
      return `${entry.kind} at seq ${entry.seq}; the run is now ${run.status}`;
  }
}

/** Quarantines, releases and give-ups of a run, in journal order. */
function history(journal: readonly JournalEntry[]): z.input<typeof QuarantineEvent>[] {
  const events: z.input<typeof QuarantineEvent>[] = [];
  for (const entry of journal) {
    const at = new Date(entry.at).toISOString();
    if (entry.kind === "run.quarantined") {
      const report = entry.report as { message?: unknown };
      events.push({
        seq: entry.seq,
        kind: entry.kind,
        at,
        ...(typeof report.message === "string" ? { message: report.message } : {}),
      });
    } else if (entry.kind === "run.released") {
      events.push({
        seq: entry.seq,
        kind: entry.kind,
        at,
        by: entry.by,
        ...(entry.epoch === undefined ? {} : { epoch: entry.epoch }),
      });
    } else if (entry.kind === "run.failed" && entry.error.code === "GIVEN_UP") {
      events.push({
        seq: entry.seq,
        kind: entry.kind,
        at,
        ...(entry.by === undefined ? {} : { by: entry.by }),
        message: entry.error.message,
      });
    }
  }
  return events;
}

/** The list's view of a quarantined run: who, where, and the gist of its report. */
function summarize(quarantined: QuarantinedRun): z.input<typeof QuarantineSummary> {
  const { run, report } = quarantined;
  const r = (report ?? {}) as Record<string, Json | undefined>;
  const summary: z.input<typeof QuarantineSummary> = {
    id: run.id,
    status: run.status,
    epoch: run.epoch,
    toolset: run.toolset,
    scriptHash: run.scriptHash,
    ...(run.script === undefined ? {} : { script: run.script }),
    seq: quarantined.seq,
    quarantinedAt: new Date(quarantined.at).toISOString(),
    reason: typeof r.reason === "string" ? r.reason : "divergence",
    message: typeof r.message === "string" ? r.message : "",
    pending: quarantined.pending.map((p) => ({
      id: p.id,
      action: p.action,
      by: p.by,
      ...(p.epoch === undefined ? {} : { epoch: p.epoch }),
      ...(p.reason === undefined ? {} : { reason: p.reason }),
    })),
  };
  if (typeof r.seq === "number" && typeof r.recorded === "object" && r.recorded !== null)
    summary.divergence = {
      seq: r.seq,
      matched: typeof r.matched === "number" ? r.matched : r.seq - 1,
      recorded: r.recorded as never,
      ...(typeof r.replayed === "object" && r.replayed !== null
        ? { replayed: r.replayed as never }
        : {}),
    };
  if (typeof r.runEpoch === "number") summary.runEpoch = r.runEpoch;
  if (Array.isArray(r.workerEpochs)) summary.workerEpochs = r.workerEpochs as number[];
  if (typeof r.worker === "object" && r.worker !== null && !Array.isArray(r.worker))
    summary.worker = r.worker;
  return summary;
}
