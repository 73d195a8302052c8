import type { Json as CoreJson } from "@rewind/core";
/**
 * Every request and response of the runs endpoints as zod schemas: the API validates requests
 * with them and generates its OpenAPI document from them, and the SDK infers its types from them.
 */
import { RUN_STATUSES, parseDuration } from "@rewind/core";
import { z } from "zod";

export { RUN_STATUSES };

const DAY = 86_400_000;
export const DEFAULT_TTL_MS = 30 * DAY;
export const MAX_TTL_MS = 3650 * DAY;
/** The longest a request may wait for a run to change (result and journal long-polls). */
export const MAX_WAIT_MS = 60_000;

/** A duration as milliseconds or a string like "30s" or "10d", turned into milliseconds. */
function duration(what: string, max: number, maxText: string, fromQuery: boolean) {
  const input = fromQuery
    ? z.string()
    : z.union([z.number(), z.string()], {
        error: `${what} must be milliseconds or a string like "30s"`,
      });
  return input.transform((value, ctx) => {
    const ms = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
    try {
      const parsed = parseDuration(ms, what);
      if (parsed > max)
        throw new RangeError(`${what} must be at most ${maxText}, got ${String(value)}`);
      return parsed;
    } catch (error) {
      ctx.addIssue({ code: "custom", message: (error as Error).message });
      return z.NEVER;
    }
  });
}

const ttl = duration("ttl", MAX_TTL_MS, "3650d", false)
  .refine((ms) => ms > 0, { error: "ttl must be longer than 0" })
  .meta({ description: 'How long the run is kept after it ends: ms or "30d" (default 30 days).' });
const wait = duration("wait", MAX_WAIT_MS, "60s (poll again to wait longer)", true).meta({
  description:
    'How long to wait for the run to change before answering: ms or "30s"; at most 60s; default 0.',
});

const SHA256 = /^sha256:[0-9a-f]{64}$/;

const CompiledScript = z
  .strictObject({
    entry: z
      .string()
      .min(1)
      .max(1024)
      .meta({ description: "The entry file's name, e.g. order.ts" }),
    code: z
      .string()
      .min(1)
      .meta({ description: "The compiled script (one bundle) as rewind's compiler emits it" }),
    sourceMap: z.string().meta({ description: "Its source map (JSON)" }),
    hash: z
      .string()
      .optional()
      .meta({ description: "Ignored: the API computes the hash from the code" }),
  })
  .meta({ description: "A compiled script; it is stored by the SHA-256 of its code" });

const ScriptRef = z
  .strictObject({
    hash: z.string().regex(SHA256, { error: 'must be "sha256:" and 64 lowercase hex digits' }),
  })
  .meta({ description: "A script stored before, by its hash" });

/** A client's key for a run's start: what it retries with (see POST /v1/runs). */
export const IdempotencyKey = z
  .string()
  .min(1, { error: "must be 1 to 255 characters" })
  .max(255, { error: "must be 1 to 255 characters" })
  .regex(/^[\x21-\x7e]+$/, { error: "must be printable ASCII without spaces" });

export const CreateRunBody = z.strictObject({
  script: z.union([CompiledScript, ScriptRef], {
    error:
      'script is a compiled script { entry, code, sourceMap } or { hash: "sha256:…" } of one stored before',
  }),
  input: z
    .unknown()
    .optional()
    .meta({ description: "The script's input: any JSON value (default null)" }),
  toolset: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, {
      error: "must be a toolset name: letters, digits, '.', '_' or '-', at most 128 characters",
    })
    .default("default")
    .meta({
      description: "The toolset the run may call, as workers register it (default: default)",
    }),
  seed: z
    .string()
    .regex(/^[0-9a-f]{64}$/, {
      error: "must be 64 lowercase hex digits (256 bits); omit it to get a random seed",
    })
    .optional()
    .meta({ description: "The seed of the run's randomness, 64 hex digits (default: random)" }),
  ttl: ttl.optional(),
  idempotencyKey: IdempotencyKey.optional().meta({
    description:
      "As the Idempotency-Key header (either, or both if equal): starting again with the same key in this namespace answers the same run (200) instead of making another",
  }),
});

/** The database cannot hold U+0000 in text: refused here rather than answered as a 503. */
const NO_NUL = /^[^\u0000]*$/;
const NUL_ERROR = "holds a NUL character (U+0000), which no id or name may contain: remove it";

export const RunIdParams = z.strictObject({
  id: z
    .string()
    .min(1)
    .max(200)
    .regex(NO_NUL, { error: NUL_ERROR })
    .meta({ description: "A run id, e.g. run_01h…" }),
});

export const SignalParams = z.strictObject({
  id: RunIdParams.shape.id,
  name: z
    .string()
    .min(1)
    .max(200)
    .regex(NO_NUL, { error: NUL_ERROR })
    .meta({ description: "The signal's name, as the script awaits it" }),
});

const instant = (what: string) =>
  z
    .string()
    .max(40)
    .transform((value, ctx) => {
      const date = new Date(/^\d+$/.test(value) ? Number(value) : value);
      if (Number.isNaN(date.getTime())) {
        ctx.addIssue({
          code: "custom",
          message: `must be an ISO 8601 instant (2026-01-31T12:00:00Z) or milliseconds since 1970, got ${JSON.stringify(value)}`,
        });
        return z.NEVER;
      }
      return date;
    })
    .meta({ description: `${what}: an ISO 8601 instant or milliseconds since 1970` });

const runIdText = z.string().min(1).max(200).regex(NO_NUL, { error: NUL_ERROR });

export const ListRunsQuery = z.strictObject({
  status: z
    .string()
    .transform((value, ctx) => {
      const statuses = value.split(",").map((s) => s.trim());
      const unknown = statuses.filter((s) => !(RUN_STATUSES as readonly string[]).includes(s));
      if (unknown.length > 0) {
        ctx.addIssue({
          code: "custom",
          message: `${unknown.map((s) => JSON.stringify(s)).join(", ")} is not a run status: use ${RUN_STATUSES.join(", ")} (several separated by commas)`,
        });
        return z.NEVER;
      }
      return statuses as (typeof RUN_STATUSES)[number][];
    })
    .optional()
    .meta({
      description: `Only runs of this status, or of any of several separated by commas (${RUN_STATUSES.join(", ")})`,
    }),
  script: z.string().min(1).max(300).regex(NO_NUL, { error: NUL_ERROR }).optional().meta({
    description: "Only runs of this script: its entry file name (order.ts) or its hash (sha256:…)",
  }),
  toolset: z.string().min(1).max(200).regex(NO_NUL, { error: NUL_ERROR }).optional().meta({
    description: "Only runs with this toolset",
  }),
  epoch: z.coerce
    .number({ error: "must be an epoch (a whole number ≥ 1)" })
    .int({ error: "must be an epoch (a whole number ≥ 1)" })
    .min(1, { error: "must be an epoch (a whole number ≥ 1)" })
    .max(1_000_000, { error: "must be an epoch (a whole number ≥ 1)" })
    .optional()
    .meta({ description: "Only runs of this epoch" }),
  createdFrom: instant("Only runs created at or after this instant").optional(),
  createdTo: instant("Only runs created before this instant").optional(),
  parent: runIdText.optional().meta({ description: "Only the forks of this run" }),
  fork: z
    .enum(["true", "false"], { error: 'must be "true" (only forks) or "false" (no forks)' })
    .transform((value) => value === "true")
    .optional()
    .meta({ description: "true: only forks (runs with a parent); false: only runs that are not" }),
  q: z.string().min(1).max(200).regex(NO_NUL, { error: NUL_ERROR }).optional().meta({
    description: "Text the run's id or its error's message contains (case-insensitive)",
  }),
  order: z.enum(["newest", "oldest"]).default("newest").meta({
    description: "newest (default) or oldest first; run ids sort by creation time",
  }),
  counts: z
    .enum(["true", "false"], { error: 'must be "true" or "false"' })
    .transform((value) => value === "true")
    .default(false)
    .meta({
      description:
        "true: also answer `counts`, the runs the other filters find by status (all pages)",
    }),
  limit: z.coerce
    .number({ error: "must be a whole number from 1 to 500" })
    .int({ error: "must be a whole number from 1 to 500" })
    .min(1, { error: "must be a whole number from 1 to 500" })
    .max(500, { error: "must be at most 500: page with `before`" })
    .default(50),
  before: runIdText.optional().meta({
    description:
      "List runs created before this run id (the `next` of the previous page, newest first)",
  }),
  after: runIdText.optional().meta({
    description:
      "List runs created after this run id (the `next` of the previous page, oldest first)",
  }),
});

/** The most entries one page of a journal read holds (`limit`). */
export const MAX_JOURNAL_PAGE = 10_000;

export const JournalQuery = z.strictObject({
  after: z.coerce
    .number({ error: "must be a journal seq (a whole number ≥ 0)" })
    .int({ error: "must be a journal seq (a whole number ≥ 0)" })
    .min(0, { error: "must be a journal seq (a whole number ≥ 0)" })
    .default(0)
    .meta({ description: "Only entries with a greater seq (default 0: the whole journal)" }),
  format: z.enum(["json", "jsonl"]).default("json").meta({
    description: "json: { entries }; jsonl: the journal file (JSON Lines, one entry a line)",
  }),
  limit: z.coerce
    .number({ error: `must be a number of entries (a whole number from 1 to ${MAX_JOURNAL_PAGE})` })
    .int({ error: `must be a number of entries (a whole number from 1 to ${MAX_JOURNAL_PAGE})` })
    .min(1, { error: `must be a number of entries (a whole number from 1 to ${MAX_JOURNAL_PAGE})` })
    .max(MAX_JOURNAL_PAGE, {
      error: `must be at most ${MAX_JOURNAL_PAGE}: read the rest with after=<the last seq read>`,
    })
    .optional()
    .meta({
      description:
        "At most this many entries (default: all of them): a page; ask again with after=<its last seq> while a page comes back full. Not for the event stream",
    }),
  values: z.enum(["inline", "deferred"]).default("inline").meta({
    description:
      "inline: every value in its entry; deferred: each value kept in the blob store (over 64 KiB as stored) is null in its entry and listed in `deferred` by `seq.field`: read it with GET /v1/runs/{id}/values/{ref}",
  }),
  wait: wait.optional(),
});

export const ResultQuery = z.strictObject({ wait: wait.optional() });

export const CreateRunQuery = z.strictObject({
  wait: duration("wait", MAX_WAIT_MS, "60s (then wait on GET /v1/runs/:id/result)", true)
    .meta({
      description:
        'How long to wait for the run to end before answering, as GET /v1/runs/:id/result would: ms or "30s"; at most 60s; default 0 (answer once the run is stored).',
    })
    .optional(),
});

export const SignalBody = z
  .unknown()
  .meta({ description: "The signal's payload: any JSON value (empty: null)" });

export const CancelBody = z
  .strictObject({ reason: z.string().max(1000).optional() })
  .optional()
  .meta({ description: "Optional: why the run is cancelled" });

// ---- responses

const isoDate = z.string().meta({ format: "date-time" });
// Typed as @rewind/core's Json for clients; the API's answers carry only values it stored as JSON,
// so nothing is checked here (a check would walk every result and input on every answer).
const Json = z.custom<CoreJson>(() => true).meta({ description: "A JSON value" });

export const ErrorData = z.object({
  name: z.string(),
  message: z.string(),
  code: z.string().optional(),
  stack: z.string().optional().meta({ description: "The script's source-mapped stack" }),
});

export const RunView = z.object({
  id: z.string(),
  status: z.enum(RUN_STATUSES),
  namespace: z.string(),
  scriptHash: z.string(),
  script: z
    .string()
    .optional()
    .meta({ description: "The script's entry file name, e.g. order.ts" }),
  toolset: z.string(),
  epoch: z.number().int(),
  lastSeq: z.number().int().meta({ description: "The seq of the journal's last entry" }),
  parent: z.object({ runId: z.string(), seq: z.number().int() }).optional(),
  result: Json.optional(),
  error: ErrorData.optional(),
  createdAt: isoDate,
  updatedAt: isoDate,
  endedAt: isoDate.optional(),
  expiresAt: isoDate
    .optional()
    .meta({ description: "When the run will be deleted (set when it ends)" }),
  replayable: z.enum(["strict", "not-strict"]).optional().meta({
    description:
      "GET /v1/runs/:id only. strict: the journal replays as recorded; not-strict: a capture policy redacted an entry the script saw in the clear (firstRedacted), so it cannot be replayed or forked past it",
  }),
  firstRedacted: z
    .object({ seq: z.number().int(), rules: z.array(z.string()) })
    .optional()
    .meta({ description: "The first redacted entry and the rules that redacted it" }),
});

export const RunList = z.object({
  runs: z.array(RunView),
  next: z.string().optional().meta({
    description:
      "Pass as `before` (newest first) or `after` (oldest first) for the next page; absent on the last",
  }),
  counts: z.partialRecord(z.enum(RUN_STATUSES), z.number().int()).optional().meta({
    description:
      "With `counts=true`: the runs every filter but `status` finds, by status, across all pages",
  }),
});

export const CreatedRun = z.object({
  id: z.string(),
  status: z.literal("queued"),
  scriptHash: z
    .string()
    .meta({ description: "The script's hash: start further runs with { hash }" }),
});

/** A repeated start (same Idempotency-Key, same request): the run the first one made, as it is now. */
export const RepeatedRun = CreatedRun.extend({
  status: z.enum(RUN_STATUSES).meta({ description: "The run's status now" }),
});

/** A start with `wait`: the run as it is when the answer is made, its outcome if it has ended. */
export const WaitedRun = RepeatedRun.extend({
  ended: z.boolean().meta({
    description: "Whether the run ended within the wait (completed, failed or cancelled)",
  }),
  result: Json.optional(),
  error: ErrorData.optional(),
});

export const JournalEntry = z
  .looseObject({
    seq: z.number().int(),
    kind: z.string(),
    at: z.number().meta({ description: "Logical time, ms since the Unix epoch" }),
    callsite: z.string().optional(),
  })
  .meta({ description: "A journal entry, values inline; kind-specific fields follow" });

export const DeferredValue = z.object({
  ref: z.string().meta({ description: "The value's reference: sha256: and 64 hex digits" }),
  size: z.number().int().meta({ description: "Its size as stored, in bytes" }),
});

const VALUE_REF = /^sha256:[0-9a-f]{64}$/;

export const RunValueParams = RunIdParams.extend({
  ref: z
    .string()
    .regex(VALUE_REF, {
      error:
        "must be a value's reference, sha256: and 64 hex digits (a journal page's deferred ref)",
    })
    .meta({ description: "The value's reference, from a journal page's `deferred`" }),
});

export const RunValue = z.object({ ref: z.string(), value: Json });

export const JournalPage = z.object({
  entries: z.array(JournalEntry),
  deferred: z.record(z.string(), DeferredValue).optional().meta({
    description:
      "With values=deferred: the values left out of their entries (null there), by `seq.field` (`12.result`)",
  }),
  status: z.enum(RUN_STATUSES).meta({ description: "The run's status when the entries were read" }),
});

export const RunResult = z.object({
  id: z.string(),
  status: z.enum(RUN_STATUSES),
  ended: z
    .boolean()
    .meta({ description: "Whether the run has ended (completed, failed or cancelled)" }),
  result: Json.optional(),
  error: ErrorData.optional(),
});

export const InboxAccepted = z.object({
  id: z.number().int().meta({ description: "The inbox item's id" }),
});

/** Where a script does not compile: file, line and column (1-based) as the author wrote them. */
export const CompileProblem = z.object({
  file: z.string().optional().meta({ description: "The file as submitted, e.g. lib/price.ts" }),
  line: z.number().int().optional(),
  column: z.number().int().optional().meta({ description: "1-based" }),
  message: z.string(),
});

export const ErrorResponse = z.object({
  error: z.object({
    code: z.string().meta({ description: "A code from Rewind's error table, e.g. INVALID_INPUT" }),
    message: z.string().meta({ description: "What happened and what to do" }),
    field: z
      .string()
      .optional()
      .meta({ description: "The offending field, e.g. body.script.code" }),
    problems: z
      .array(CompileProblem)
      .optional()
      .meta({ description: "With COMPILE_ERROR: each compile error, where it is" }),
  }),
});

export const Health = z.object({ ok: z.literal(true) });

export const Root = z.object({
  name: z.literal("rewind"),
  version: z.string(),
  api: z.string(),
  openapi: z.string(),
  dashboard: z.string().optional().meta({ description: "The operators' dashboard, when served" }),
});

export const ForkRunBody = z.strictObject({
  script: CreateRunBody.shape.script,
  at: z
    .number()
    .int()
    .min(2, { error: "at must be a seq of the parent's journal, 2 or more" })
    .optional()
    .meta({
      description:
        "Run live from this seq of the parent at the latest (default: from the first difference)",
    }),
  ttl: ttl.optional(),
  dryRun: z
    .boolean()
    .optional()
    .meta({ description: "Only preview what the fork would reuse and run live" }),
});

export const ForkPreview = z
  .object({
    reused: z.number().int().meta({ description: "Entries of the parent the fork reuses" }),
    firstLive: z
      .object({
        seq: z.number().int(),
        kind: z.string(),
        label: z.string(),
        callsite: z.string().optional(),
      })
      .optional()
      .meta({ description: "The first entry that runs live" }),
    runAgain: z
      .array(
        z.object({
          seq: z.number().int(),
          name: z.string(),
          callId: z.string(),
          callsite: z.string().optional(),
        }),
      )
      .meta({
        description:
          "Reused calls without an outcome: they run again with their callId (a tool unsafe to repeat fails the fork)",
      }),
    unsafe: z
      .array(
        z.object({
          seq: z.number().int(),
          name: z.string(),
          callsite: z.string().optional(),
          message: z.string(),
        }),
      )
      .meta({
        description:
          "Calls of tools marked unsafeToRepeat the fork would make again: in flight in the parent, or the first live call when the parent already made it",
      }),
    failure: z
      .object({ code: z.literal("UNSAFE_TO_REPEAT"), message: z.string() })
      .optional()
      .meta({ description: "The fork would fail at once with this, before calling anything" }),
    toolsetKnown: z.boolean().meta({
      description:
        "False when no worker has published the run's toolset: tools unsafe to repeat could not be named",
    }),
    parentCancelled: z
      .object({ seq: z.number().int(), reason: z.string().optional() })
      .optional()
      .meta({
        description:
          "The parent was cancelled at this seq: the fork does not inherit the cancel, it runs on live past it",
      }),
  })
  .meta({ description: "What a fork does, computed as its worker will compute it" });

export const ForkedRun = z.object({
  id: z.string(),
  status: z.literal("queued"),
  scriptHash: z.string(),
  parent: z.object({ runId: z.string(), seq: z.number().int() }),
  preview: ForkPreview,
});

export const ForkDryRun = z.object({ dryRun: z.literal(true), preview: ForkPreview });

// ---- the TypeScript types of the wire: requests as a client writes them (before defaults and
// transforms), responses as the API sends them.

export type StartRun = z.input<typeof CreateRunBody>;
export type ScriptSource = StartRun["script"];
/** The query of GET /v1/runs as a client passes it (`limit` travels as text and is coerced). */
export type ListRunsFilter = Omit<z.input<typeof ListRunsQuery>, "limit"> & { limit?: number };
export type ForkRequest = z.input<typeof ForkRunBody>;
export type ErrorData = z.output<typeof ErrorData>;
export type RunView = z.output<typeof RunView>;
export type RunList = z.output<typeof RunList>;
export type CreatedRun = z.output<typeof CreatedRun>;
export type RepeatedRun = z.output<typeof RepeatedRun>;
export type WaitedRun = z.output<typeof WaitedRun>;
export type JournalPage = z.output<typeof JournalPage>;
export type DeferredValue = z.output<typeof DeferredValue>;
export type RunValueParams = z.output<typeof RunValueParams>;
export type RunValue = z.output<typeof RunValue>;
export type RunResult = z.output<typeof RunResult>;
export type InboxAccepted = z.output<typeof InboxAccepted>;
export type ErrorResponse = z.output<typeof ErrorResponse>;
export type CompileProblem = z.output<typeof CompileProblem>;
export type Root = z.output<typeof Root>;
export type ForkPreview = z.output<typeof ForkPreview>;
export type ForkedRun = z.output<typeof ForkedRun>;
export type ForkDryRun = z.output<typeof ForkDryRun>;
