/**
 * The replay pool's worker thread: re-executes scripts against journals with a sandbox of its
 * own, calling nothing. Sync mode: this thread does nothing else, so the fastest crossing wins
 * (the main thread's event loop is never involved). Errors come back as data: a class and its
 * fields do not survive the thread boundary, a code and a message do.
 */
import { toErrorData, type ErrorData, type JournalEntry, type RunStartedEntry } from "@rewind/core";
import { Sandbox, type CompiledScript, type SandboxOptions } from "@rewind/sandbox";
import { previewFork, type ForkPreview } from "./fork-preview.js";
import { checkReplay, type ReplayCheck } from "./replay-check.js";

/** One task for a thread. Journals travel as JSON text: see ReplayPool.check. */
export type ReplayTask = { sandbox: SandboxLimits } & (
  | { kind: "check"; script: CompiledScript; journal: string }
  | {
      kind: "preview-fork";
      script: CompiledScript;
      started: RunStartedEntry;
      parent: string;
      at?: number;
      unsafeTools?: readonly string[];
    }
);

export type SandboxLimits = Omit<SandboxOptions, "mode" | "replaySliceMs">;

export type ReplayOutcome<T> = { ok: T } | { error: ErrorData };

let sandbox: Sandbox | undefined;
let limits = "";

export default async function replayTask(
  task: ReplayTask,
): Promise<ReplayOutcome<ReplayCheck | ForkPreview>> {
  const wanted = JSON.stringify(task.sandbox);
  if (sandbox === undefined || wanted !== limits) {
    sandbox?.dispose();
    sandbox = new Sandbox({ ...task.sandbox, mode: "sync" });
    limits = wanted;
  }
  try {
    switch (task.kind) {
      case "check":
        return {
          ok: await checkReplay(sandbox, task.script, JSON.parse(task.journal) as JournalEntry[]),
        };
      case "preview-fork":
        return {
          ok: await previewFork(
            sandbox,
            task.script,
            task.started,
            JSON.parse(task.parent) as JournalEntry[],
            task.at,
            task.unsafeTools,
          ),
        };
    }
  } catch (error) {
    return { error: toErrorData(error, "SANDBOX_ERROR") };
  }
}
