import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { ForkPreview, Rewind } from "@rewind/sdk";
import { Filename, ScriptText } from "./replay-tool.js";
import { RunId } from "./run-tools.js";
import { compileSource } from "./script-source.js";
import { answer, guarded } from "./tool-result.js";

/**
 * `retry_run`: forks a run with a corrected script. The fork reuses the parent's recorded results
 * while the new script makes the same calls (no tool is called for them) and runs live from the
 * first difference. The answer is the API's preview, computed as the fork's worker will run it.
 */
export function registerRetryTool(server: McpServer, api: Rewind): void {
  server.registerTool(
    "retry_run",
    {
      title: "Retry a run with a corrected script (fork)",
      description:
        "Fix a failed (or any) run: start a new run (a fork) of a corrected script with the same " +
        "input, seed and toolset. Calls the new script makes exactly as the run did are answered " +
        "from its history (the tools are NOT called again); from the first difference, or from " +
        "seq `at`, it runs live. Returns the new run's id, how many entries are reused, the first " +
        "live call, and any call that will run again. Use dryRun to see this without starting " +
        "anything; check with replay_run first; follow the fork with get_run (waitSeconds).",
      inputSchema: {
        runId: RunId,
        script: ScriptText,
        filename: Filename,
        at: z
          .number()
          .int()
          .min(2)
          .optional()
          .describe(
            "Run live from this seq of the parent at the latest (default: first difference)",
          ),
        dryRun: z
          .boolean()
          .default(false)
          .describe("Only preview what the fork would reuse and run; start nothing"),
      },
      outputSchema: {
        forkId: z.string().optional().describe("The new run (absent on a dry run)"),
        dryRun: z.boolean(),
        reused: z.number().describe("Entries of the parent reused (after run.started)"),
        firstLive: z
          .object({
            seq: z.number(),
            kind: z.string(),
            label: z.string(),
            callsite: z.string().optional(),
          })
          .optional()
          .describe("The first entry that runs live"),
        runAgain: z
          .array(
            z.object({
              seq: z.number(),
              name: z.string(),
              callId: z.string(),
              callsite: z.string().optional(),
            }),
          )
          .describe("Reused calls with no recorded outcome: they run again, with their callId"),
        unsafe: z
          .array(
            z.object({
              seq: z.number(),
              name: z.string(),
              callsite: z.string().optional(),
              message: z.string(),
            }),
          )
          .describe("Calls of tools marked unsafeToRepeat that the fork would make again"),
        failure: z
          .object({ code: z.string(), message: z.string() })
          .optional()
          .describe("The fork would fail with this before calling anything"),
        toolsetKnown: z.boolean(),
      },
    },
    guarded(async ({ runId, script, filename, at, dryRun }) => {
      const upload = await compileSource(script, filename);
      const fork = await api.runs.fork(runId, {
        script: upload,
        ...(at === undefined ? {} : { at }),
        ...(dryRun ? { dryRun: true } : {}),
      });
      const started = "id" in fork ? fork : undefined;
      const text = [
        started === undefined
          ? `Dry run: nothing was started. A fork of ${runId} would:`
          : `Started ${started.id} (${started.status}), a fork of ${runId}. It:`,
        ...describe(fork.preview, dryRun),
        started === undefined
          ? "Call retry_run again without dryRun to start it."
          : `Follow it with get_run { runId: "${started.id}", waitSeconds: 30 }.`,
      ].join("\n");
      return answer(text, {
        ...(started ? { forkId: started.id } : {}),
        dryRun,
        reused: fork.preview.reused,
        ...(fork.preview.firstLive ? { firstLive: fork.preview.firstLive } : {}),
        runAgain: fork.preview.runAgain,
        unsafe: fork.preview.unsafe,
        ...(fork.preview.failure ? { failure: fork.preview.failure } : {}),
        toolsetKnown: fork.preview.toolsetKnown,
      });
    }),
  );
}

function describe(preview: ForkPreview, dryRun: boolean): string[] {
  const v = (now: string, would: string) => (dryRun ? would : now);
  const live = preview.firstLive;
  return [
    `- ${v("reuses", "reuse")} ${preview.reused} recorded entries (no tool is called again for them)`,
    live
      ? `- ${v("runs", "run")} live from ${live.label} at seq ${live.seq}${live.callsite ? ` (${live.callsite})` : ""}`
      : `- ${v("runs", "run")} live from the end of the parent's history`,
    ...preview.runAgain.map(
      (c) =>
        `- ${v("runs again", "run again")} tools.${c.name}() at seq ${c.seq} (callId ${c.callId}): it was in flight in the parent`,
    ),
    ...preview.unsafe.map((c) => `- UNSAFE TO REPEAT: ${c.message}`),
    ...(preview.failure
      ? [`- ${v("fails", "would fail")} with ${preview.failure.code} before calling anything`]
      : []),
    ...(preview.toolsetKnown
      ? []
      : ["- (no worker has published the toolset: tools unsafe to repeat cannot be named)"]),
  ];
}
