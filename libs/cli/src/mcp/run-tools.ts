import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { RUN_STATUSES } from "@rewind/core";
import type { Rewind, RunView } from "@rewind/sdk";
import { formatLine, journalLines } from "./journal-lines.js";
import { sourcesOf } from "./script-source.js";
import { answer, guarded } from "./tool-result.js";

export const RunId = z
  .string()
  .min(1)
  .max(200)
  .describe("The run's id, e.g. run_01J… (list_runs shows them)");

const RunSummary = z.object({
  id: z.string(),
  status: z.enum(RUN_STATUSES),
  toolset: z.string(),
  createdAt: z.string(),
  parent: z.object({ runId: z.string(), seq: z.number() }).optional(),
  error: z.string().optional(),
});

const summary = (run: RunView): z.infer<typeof RunSummary> => ({
  id: run.id,
  status: run.status,
  toolset: run.toolset,
  createdAt: run.createdAt,
  ...(run.parent ? { parent: run.parent } : {}),
  ...(run.error ? { error: `${run.error.code ?? run.error.name}: ${run.error.message}` } : {}),
});

/** `list_runs` and `get_run`: what a model reads before it decides to replay or retry. */
export function registerRunTools(server: McpServer, api: Rewind): void {
  server.registerTool(
    "list_runs",
    {
      title: "List runs",
      description:
        "List Rewind runs, newest first, with their status and, for failed runs, the error. " +
        "Use status 'failed' to find runs to fix, or 'waiting'/'running' for open runs.",
      inputSchema: {
        status: z.enum(RUN_STATUSES).optional().describe("Only runs with this status"),
        limit: z.number().int().min(1).max(200).default(20).describe("How many runs (1-200)"),
      },
      outputSchema: { runs: z.array(RunSummary), more: z.boolean() },
      annotations: { readOnlyHint: true },
    },
    guarded(async ({ status, limit }) => {
      const page = await api.runs.list({ ...(status ? { status } : {}), limit });
      const runs = page.runs.map(summary);
      const lines = runs.map(
        (r) =>
          `${r.id}  ${r.status}  toolset ${r.toolset}  ${r.createdAt}${r.parent ? `  fork of ${r.parent.runId}` : ""}${r.error ? `  ${r.error}` : ""}`,
      );
      const text =
        runs.length === 0
          ? `No runs${status ? ` with status ${status}` : ""}.`
          : `${runs.length} run${runs.length === 1 ? "" : "s"}${page.next ? " (more exist: raise limit)" : ""}:\n${lines.join("\n")}`;
      return answer(text, { runs, more: page.next !== undefined });
    }),
  );

  server.registerTool(
    "get_run",
    {
      title: "Show a run and its journal",
      description:
        "Show one run: its status, result or error, and its journal, one line per entry " +
        "(seq, kind, tool name with short arguments or result, and the callsite file:line:column in " +
        "the script). Set withScript to also get the run's TypeScript source, to correct it for " +
        "replay_run / retry_run. Set waitSeconds to wait for a run (e.g. a fork) to finish first.",
      inputSchema: {
        runId: RunId,
        withScript: z
          .boolean()
          .default(false)
          .describe("Include the source of the script the run executes"),
        waitSeconds: z
          .number()
          .int()
          .min(0)
          .max(60)
          .default(0)
          .describe("Wait up to this many seconds for the run to end before answering"),
        afterSeq: z
          .number()
          .int()
          .min(0)
          .default(0)
          .describe("Only journal entries after this seq (to page through a long journal)"),
        limit: z
          .number()
          .int()
          .min(1)
          .max(1000)
          .default(200)
          .describe("At most this many journal entries"),
      },
      outputSchema: {
        run: RunSummary.extend({
          epoch: z.number(),
          result: z.unknown().optional(),
          error: z.string().optional(),
          stack: z.string().optional(),
        }),
        journal: z.array(
          z.object({
            seq: z.number(),
            kind: z.string(),
            what: z.string(),
            callsite: z.string().optional(),
          }),
        ),
        moreAfterSeq: z.number().optional(),
        script: z.object({ entry: z.string(), source: z.string() }).optional(),
      },
      annotations: { readOnlyHint: true },
    },
    guarded(async ({ runId, withScript, waitSeconds, afterSeq, limit }) => {
      if (waitSeconds > 0) await api.runs.result(runId, `${waitSeconds}s`);
      const run = await api.runs.get(runId);
      const { entries } = await api.runs.journal(runId, afterSeq);
      const journal = journalLines(entries.slice(0, limit));
      const more = entries.length > limit ? journal.at(-1)?.seq : undefined;
      let script: { entry: string; source: string } | undefined;
      if (withScript) {
        const stored = await api.runs.script(runId);
        const sources = sourcesOf(stored.sourceMap);
        const source =
          [...sources].find(
            ([file]) => file === stored.entry || file.endsWith(`/${stored.entry}`),
          )?.[1] ?? [...sources.values()][0];
        if (source !== undefined) script = { entry: stored.entry, source };
      }
      const view = {
        ...summary(run),
        epoch: run.epoch,
        ...(run.result !== undefined ? { result: run.result } : {}),
        ...(run.error?.stack ? { stack: run.error.stack } : {}),
      };
      const head = [
        `run ${run.id}: ${run.status}`,
        `toolset ${run.toolset}, epoch ${run.epoch}`,
        ...(run.parent
          ? [`fork of ${run.parent.runId} (live from seq ${run.parent.seq} at the latest)`]
          : []),
        ...(run.result !== undefined ? [`result ${JSON.stringify(run.result)}`] : []),
        ...(view.error ? [`error ${view.error}`] : []),
        ...(view.stack && view.stack !== run.error?.message ? [`stack ${view.stack}`] : []),
      ];
      const text = [
        ...head,
        "",
        `journal${afterSeq > 0 ? ` after seq ${afterSeq}` : ""}:`,
        ...journal.map(formatLine),
        ...(more !== undefined ? [`… more entries: call again with afterSeq ${more}`] : []),
        ...(script ? ["", `script ${script.entry}:`, script.source] : []),
      ].join("\n");
      return answer(text, {
        run: view,
        journal,
        ...(more !== undefined ? { moreAfterSeq: more } : {}),
        ...(script ? { script } : {}),
      });
    }),
  );
}
