/**
 * The workers' toolset for the cluster benchmarks (`rewind worker --toolset tools.ts`): one
 * trivial tool, so the figures measure the platform (journal, queue, sandbox), not the tool.
 */
import { defineToolset } from "@rewind/sdk";

export default defineToolset("bench", {
  noop: (args: { i: number }): number => args.i,
});
