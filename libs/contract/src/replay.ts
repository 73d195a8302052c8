/** Requests and responses of the replay checks (one run, or a batch) and of a run's script. */
import { z } from "zod";
import { EntryLabel } from "./quarantine.js";
import { CreateRunBody, RunIdParams } from "./runs.js";

export const ReplayBody = z.strictObject({
  script: CreateRunBody.shape.script.optional().meta({
    description: "A corrected script to check against the run's history (default: the run's own)",
  }),
});

/**
 * What a check means for the run: the script replays it exactly ("matches"); the run failed and
 * the script diverges exactly at its failure, so a fork reuses every entry before it
 * ("fixes-failure": what a corrected script looks like); or it diverges before that, or the run
 * did not fail ("incompatible": a fork would run live from the divergence).
 */
export const ReplayVerdict = z.enum(["matches", "fixes-failure", "incompatible"]);

/** The first entry a replay does not match, both sides labelled, and what the script emitted instead. */
export const ReplayDivergence = z
  .looseObject({
    seq: z.number().int().meta({ description: "The first journal entry that differs" }),
    matched: z.number().int().meta({ description: "Entries that matched before it" }),
    recorded: EntryLabel.meta({ description: "What the journal holds there" }),
    replayed: EntryLabel.optional().meta({ description: "What the script did instead" }),
    replayedCommands: z
      .array(z.looseObject({ kind: z.string(), callsite: z.string().optional() }))
      .optional()
      .meta({
        description:
          "The commands the script emitted from the divergence on, whole (a call's name and args), the first being the one that differs; at most 20",
      }),
  })
  .meta({ description: "Where a replay leaves its journal" });

export const ReplayCheck = z.object({
  matches: z.boolean(),
  verdict: ReplayVerdict.meta({
    description:
      "matches: replays exactly; fixes-failure: diverges only where the run failed (safe to fork); incompatible: diverges before that",
  }),
  entries: z.number().int().optional(),
  message: z.string().optional(),
  divergence: ReplayDivergence.optional(),
});

/** The most runs one batch may name: a CLI checking thousands sends several batches. */
export const MAX_REPLAY_BATCH = 200;

export const ReplayBatchBody = z.strictObject({
  script: CreateRunBody.shape.script.optional().meta({
    description:
      "A corrected script to check against every run's history (default: each run's own)",
  }),
  runs: z
    .array(RunIdParams.shape.id)
    .min(1, { error: "runs names at least one run id" })
    .max(MAX_REPLAY_BATCH, {
      error: `runs names at most ${MAX_REPLAY_BATCH} run ids: send several batches`,
    })
    .meta({ description: "The runs to check (GET /v1/runs lists them)" }),
});

export const ReplayBatchCheck = ReplayCheck.extend({
  runId: z.string(),
  verdict: ReplayCheck.shape.verdict.optional().meta({
    description: "As a single check's; absent when the run could not be checked (see error)",
  }),
  error: z
    .object({ code: z.string(), message: z.string() })
    .optional()
    .meta({ description: "Why the run could not be checked (e.g. NOT_FOUND)" }),
});

export const ReplayBatch = z.object({ checks: z.array(ReplayBatchCheck) });

export const RunScript = z
  .strictObject({
    hash: z.string(),
    entry: z.string(),
    code: z.string(),
    sourceMap: z.string(),
  })
  .meta({ description: "The compiled script a run executes, with its source map" });

export type ReplayVerdict = z.output<typeof ReplayVerdict>;
export type ReplayCheck = z.output<typeof ReplayCheck>;
export type ReplayDivergence = z.output<typeof ReplayDivergence>;
export type ReplayBatchCheck = z.output<typeof ReplayBatchCheck>;
export type ReplayBatch = z.output<typeof ReplayBatch>;
export type RunScript = z.output<typeof RunScript>;
