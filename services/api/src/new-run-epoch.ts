import { z } from "zod";
import { RewindError } from "@rewind/core";
import { newRunEpochProblem } from "@rewind/sandbox";

/**
 * REWIND_NEW_RUN_EPOCH: the epoch the API starts new runs in, when not the newest its runtime
 * serves (newRunEpoch()). Any released epoch this build supports, whatever the API's own Node:
 * the API executes nothing, the runs wait for workers of that epoch. For a rollout that keeps new
 * runs on the epoch its old workers serve until the new ones are up, and for tests of upgrades
 * (services/worker/test/epoch-upgrade.int.test.ts starts its runs in epoch 1 on Node 20).
 */
export const newRunEpochSetting = z.coerce
  .number({ error: "REWIND_NEW_RUN_EPOCH must be an epoch number, like 1" })
  .int("REWIND_NEW_RUN_EPOCH must be an epoch number, like 1")
  .superRefine((epoch, ctx) => {
    const problem = newRunEpochProblem(epoch);
    if (problem !== undefined)
      ctx.addIssue({ code: "custom", message: `REWIND_NEW_RUN_EPOCH: ${problem}` });
  })
  .optional();

/** The setting read from an environment by a process that parses no service config (`rewind dev`). */
export function newRunEpochFrom(env: NodeJS.ProcessEnv, service: string): number | undefined {
  const value = env.REWIND_NEW_RUN_EPOCH;
  if (value === undefined || value === "") return undefined;
  const parsed = newRunEpochSetting.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new RewindError(
    "INVALID_INPUT",
    `${service} cannot start: ${parsed.error.issues.map((issue) => issue.message).join("; ")}`,
  );
}
