/**
 * The workers' toolset for the cluster benchmarks (`rewind worker --toolset tools.ts`): a
 * trivial tool, so the figures measure the platform (journal, queue, sandbox), not the tool, and
 * one that only waits, to space a run's commits out (../stream/bench.ts).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { defineToolset } from "@rewind/sdk";

export default defineToolset("bench", {
  noop: (args: { i: number }): number => args.i,
  pause: async (args: { ms: number }): Promise<number> => {
    await sleep(args.ms);
    return args.ms;
  },
});
