import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { Rewind } from "@rewind/sdk";
import { RunId } from "./run-tools.js";
import { compileSource, sourceLine, type ScriptUpload } from "./script-source.js";
import { answer, guarded } from "./tool-result.js";

export const ScriptText = z
  .string()
  .max(4 * 1024 * 1024)
  .describe(
    'The whole corrected script: a TypeScript ES module with `import { tools } from "rewind"` and ' +
      "`export default async function main(input) { … }` (get_run with withScript gives the current one)",
  );
export const Filename = z
  .string()
  .default("fixed.ts")
  .describe("The script's file name, shown in callsites (default fixed.ts)");

const Side = z.object({
  label: z.string(),
  callsite: z.string().optional(),
  line: z.string().optional().describe("The source line at the callsite"),
});
type Side = z.infer<typeof Side>;

interface ApiSide {
  label?: string;
  callsite?: string;
}

/**
 * `replay_run`: re-executes the run's own script, or a corrected one, against the run's history
 * on the server, calling no tool. Compatible, or the first divergence with both sides' source lines.
 */
export function registerReplayTool(server: McpServer, api: Rewind): void {
  server.registerTool(
    "replay_run",
    {
      title: "Check a script against a run's history",
      description:
        "Re-execute a script against a run's recorded journal without calling any tool. Without " +
        "`script`, checks that the run's own script still matches its journal. With `script` (a " +
        "corrected version), says whether it is compatible with the history, or where it first " +
        "diverges: the seq, what the journal recorded and what the new script does instead, each " +
        "with its callsite and source line. A fix for a failed run is expected to diverge only at " +
        "the failure: everything before it is what retry_run will reuse.",
      inputSchema: { runId: RunId, script: ScriptText.optional(), filename: Filename },
      outputSchema: {
        compatible: z.boolean(),
        entries: z.number().optional().describe("Journal entries replayed (when compatible)"),
        divergence: z
          .object({
            seq: z.number(),
            matched: z.number().describe("Entries that matched before the divergence"),
            recorded: Side,
            replayed: Side.optional().describe("Absent when the script emitted nothing more"),
          })
          .optional(),
      },
      annotations: { readOnlyHint: true },
    },
    guarded(async ({ runId, script, filename }) => {
      const upload = script === undefined ? undefined : await compileSource(script, filename);
      const check = await api.runs.replay(runId, upload);
      const subject = upload ? `the script ${upload.entry}` : `the run's own script`;
      if (check.matches) {
        const text = `${subject} is compatible with ${runId}: all ${check.entries} journal entries replay the same (nothing was called).`;
        return answer(text, { compatible: true, entries: check.entries });
      }
      const d = check.divergence as
        { seq: number; matched: number; recorded: ApiSide; replayed?: ApiSide } | undefined;
      if (d === undefined)
        return answer(`${subject} does not match ${runId}: ${check.message ?? ""}`, {
          compatible: false,
        });
      const original = await api.runs.script(runId);
      const recorded = side(d.recorded, original.sourceMap);
      const replayed = d.replayed ? side(d.replayed, (upload ?? original).sourceMap) : undefined;
      const show = (s: Side) =>
        `${s.label}${s.callsite ? `   at ${s.callsite}` : ""}${s.line ? `\n      ${s.line}` : ""}`;
      const text = [
        `${subject} diverges from ${runId} at seq ${d.seq} (${d.matched} ${d.matched === 1 ? "entry" : "entries"} matched before it).`,
        `  the journal recorded`,
        `    ${show(recorded)}`,
        replayed
          ? `  but the script now does\n    ${show(replayed)}`
          : "  but the script emitted nothing more before that point",
        upload
          ? `retry_run with this script would reuse what matched before seq ${d.seq} and run live from there.`
          : "",
      ]
        .filter((l) => l !== "")
        .join("\n");
      return answer(text, {
        compatible: false,
        divergence: {
          seq: d.seq,
          matched: d.matched,
          recorded,
          ...(replayed ? { replayed } : {}),
        },
      });
    }),
  );
}

function side(apiSide: ApiSide, sourceMap: ScriptUpload["sourceMap"]): Side {
  const line = sourceLine(sourceMap, apiSide.callsite);
  return {
    label: apiSide.label ?? "?",
    ...(apiSide.callsite ? { callsite: apiSide.callsite } : {}),
    ...(line ? { line } : {}),
  };
}
