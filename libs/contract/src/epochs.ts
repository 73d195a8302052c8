import { z } from "zod";

/** Moving runs between epochs: an operator's check, and what became of each run. */

const epochNumber = z.coerce
  .number({ error: "an epoch is a whole number, like 1" })
  .int("an epoch is a whole number, like 1")
  .min(1, "epochs start at 1")
  .max(1_000_000, "no epoch is that large");

export const EpochParams = z.strictObject({
  epoch: epochNumber.meta({ description: "The epoch whose open runs are checked" }),
});

export const EpochCheckParams = z.strictObject({
  id: z.coerce
    .number({ error: "a check id is a whole number" })
    .int("a check id is a whole number")
    .min(1, "a check id is at least 1")
    .max(Number.MAX_SAFE_INTEGER, "no check id is that large")
    .meta({ description: "The id POST /v1/epochs/{epoch}/migrate answered" }),
});

export const MigrateBody = z.strictObject({
  to: epochNumber.meta({ description: "The epoch to move the runs that replay on it to" }),
  dryRun: z
    .boolean()
    .default(false)
    .meta({ description: "Only check: say which runs would move, move none" }),
  allowDraft: z.boolean().default(false).meta({
    description:
      "Allow a draft (unreleased) target epoch: its runtime may still change, and runs moved onto it may not replay on the build that releases it. For trying a runtime out, not for production runs",
  }),
});

const RunVerdict = z.object({
  runId: z.string(),
  verdict: z.enum(["moved", "would-move", "diverges", "skipped"]),
  checkedSeq: z
    .number()
    .int()
    .optional()
    .meta({ description: "The journal's last seq that was replayed" }),
  divergedAt: z.number().int().optional().meta({ description: "The first seq that differs" }),
  message: z.string().optional(),
});

export const EpochCheckView = z.object({
  id: z.number().int(),
  from: z.number().int(),
  to: z.number().int(),
  dryRun: z.boolean(),
  requestedBy: z.string(),
  requestedAt: z.string(),
  state: z.enum(["pending", "checking", "done"]).meta({
    description:
      "pending: no worker of the target epoch took it yet; checking: one replays the runs; done: see runs",
  }),
  takenBy: z.string().optional(),
  finishedAt: z.string().optional(),
  checkedBy: z.string().optional().meta({ description: "The worker that replayed the runs" }),
  runtime: z.string().optional().meta({ description: "Its Node and V8" }),
  runs: z.array(RunVerdict).optional(),
});

// ---- the TypeScript types of the wire
export type MigrateEpoch = z.input<typeof MigrateBody>;
export type EpochCheckView = z.output<typeof EpochCheckView>;
export type EpochRunVerdict = NonNullable<EpochCheckView["runs"]>[number];
