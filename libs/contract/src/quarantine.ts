/**
 * Requests and responses of the quarantine and epochs endpoints, as zod schemas (validated with,
 * and rendered into the OpenAPI document like every other route's).
 */
import { z } from "zod";
import { ListRunsQuery, RUN_STATUSES, RunView, type ListRunsFilter } from "./runs.js";

const isoDate = z.string().meta({ format: "date-time" });

export const QuarantineListQuery = ListRunsQuery.pick({ limit: true, before: true });

export const EntryLabel = z.object({
  kind: z.string(),
  label: z.string().meta({ description: "The entry in words, e.g. call charge({ cents: 1200 })" }),
  callsite: z.string().optional().meta({ description: "file:line:column in the script" }),
});

export const PendingRequest = z.object({
  id: z.number().int(),
  action: z.enum(["release", "give-up"]),
  by: z.string().meta({ description: "Who asked: the API token's label @ its namespace" }),
  epoch: z.number().int().optional(),
  reason: z.string().optional(),
});

export const QuarantineSummary = z
  .object({
    id: z.string(),
    status: z.enum(RUN_STATUSES),
    epoch: z.number().int().meta({ description: "The run's epoch (a release may change it)" }),
    toolset: z.string(),
    scriptHash: z.string().meta({ description: "The run's script (sha256: of its code)" }),
    script: z.string().optional().meta({ description: "Its entry file's name, e.g. order.ts" }),
    seq: z.number().int().meta({ description: "The seq of the run.quarantined entry" }),
    quarantinedAt: isoDate,
    reason: z.string().meta({
      description:
        "divergence, invalid-journal (a journal that cannot replay), or not-replayable (a capture policy redacted what its replay needs)",
    }),
    message: z.string(),
    divergence: z
      .object({
        seq: z.number().int().meta({ description: "The first journal entry that differs" }),
        matched: z.number().int(),
        recorded: EntryLabel.meta({ description: "What the journal holds there" }),
        replayed: EntryLabel.optional().meta({ description: "What the script did instead" }),
      })
      .optional(),
    runEpoch: z.number().int().optional(),
    workerEpochs: z.array(z.number().int()).optional(),
    worker: z
      .looseObject({ owner: z.string().optional(), build: z.string().optional() })
      .optional()
      .meta({ description: "The worker that quarantined it: owner, build, V8, isolated-vm" }),
    pending: z.array(PendingRequest).meta({ description: "Requests not yet acted on" }),
  })
  .meta({ description: "A quarantined run and the summary of its divergence report" });

export const QuarantineList = z.object({
  runs: z.array(QuarantineSummary),
  next: z
    .string()
    .optional()
    .meta({ description: "Pass as `before` for the next page; absent on the last" }),
});

export const QuarantineEvent = z.object({
  seq: z.number().int(),
  kind: z.enum(["run.quarantined", "run.released", "run.failed"]),
  at: isoDate,
  by: z.string().optional(),
  epoch: z.number().int().optional(),
  message: z.string().optional(),
});

export const QuarantineDetail = z.object({
  run: RunView,
  quarantined: z.boolean(),
  current: QuarantineSummary.optional().meta({ description: "While quarantined: the summary" }),
  report: z
    .record(z.string(), z.unknown())
    .optional()
    .meta({ description: "While quarantined: the whole report of its run.quarantined entry" }),
  history: z
    .array(QuarantineEvent)
    .meta({ description: "Every quarantine of the run, release and give-up, in journal order" }),
});

export const ReleaseBody = z
  .strictObject({
    epoch: z
      .number()
      .int({ error: "epoch must be a whole number" })
      .min(1, { error: "epoch must be 1 or more" })
      .optional()
      .meta({ description: "The epoch to replay the run on (default: its own)" }),
  })
  .optional();

export const GiveUpBody = z
  .strictObject({
    reason: z
      .string()
      .min(1, { error: "reason must not be empty" })
      .max(1000, { error: "reason must be at most 1000 characters" })
      .optional()
      .meta({ description: "Why: recorded in the run's failure" }),
  })
  .optional();

export const QuarantineAction = z.object({
  action: z.enum(["release", "give-up"]),
  state: z.enum(["done", "pending", "unchanged"]).meta({
    description:
      "done: the quarantine service acted; pending: it has not yet (it will); unchanged: it was already done before",
  }),
  message: z.string(),
  run: RunView,
  request: z.object({ id: z.number().int() }).optional(),
});

const EpochRuns = z.object({
  open: z.number().int().meta({ description: "Runs of this epoch that have not ended" }),
  byStatus: z.record(z.string(), z.number().int()),
});

export const EpochView = z.object({
  epoch: z.number().int(),
  known: z.boolean().meta({ description: "Whether this build knows the epoch (it is released)" }),
  supported: z.boolean().meta({ description: "Whether this build can run it" }),
  current: z.boolean().meta({ description: "New runs start in it" }),
  released: z.string().optional(),
  environment: z
    .object({ v8: z.string(), isolatedVm: z.string(), icu: z.string(), tz: z.string() })
    .optional(),
  sandboxDigest: z.string().optional(),
  matchingDigest: z.string().optional(),
  notes: z.string().optional(),
  runs: EpochRuns.meta({ description: "This namespace's live runs on the epoch" }),
  workers: z.number().int().meta({
    description:
      "Workers alive that run the epoch (seen in the last 15 s). With none, its runs wait for one",
  }),
  liveWorkers: z
    .array(z.object({ owner: z.string(), seenAt: z.string() }))
    .meta({ description: "The live workers that run it, by lease owner name, and when last seen" }),
  waiting: z.number().int().meta({
    description:
      "Open runs (quarantined ones aside) that wait for a worker: those of an epoch no live worker runs",
  }),
});

export const EpochList = z.object({ current: z.number().int(), epochs: z.array(EpochView) });

export type EntryLabel = z.output<typeof EntryLabel>;
export type PendingRequest = z.output<typeof PendingRequest>;
export type QuarantineSummary = z.output<typeof QuarantineSummary>;
export type QuarantineList = z.output<typeof QuarantineList>;
export type QuarantineEvent = z.output<typeof QuarantineEvent>;
export type QuarantineDetail = z.output<typeof QuarantineDetail>;
export type QuarantineAction = z.output<typeof QuarantineAction>;
export type EpochView = z.output<typeof EpochView>;
export type EpochList = z.output<typeof EpochList>;
/** The query of GET /v1/quarantine as a client passes it. */
export type QuarantinePage = Omit<ListRunsFilter, "status">;
