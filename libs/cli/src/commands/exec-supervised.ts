import { spawn } from "node:child_process";
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import type { JournalEntry } from "@rewind/core";
import { toJournalFile } from "@rewind/journal";
import { red } from "../format.js";
import type { ExecOptions } from "./exec.js";

/** Set in the child that does the work; the parent only watches it. */
export const CHILD_ENV = "REWIND_EXEC_CHILD";

/**
 * `rewind exec` runs the script in a child process and watches it: V8 may abort a process whose
 * isolate cannot satisfy one huge allocation (isolated-vm's memory limit is not a hard limit),
 * and a script must never take the command down with it. If the child dies that way, the run
 * fails with MEMORY_LIMIT, journaled like any other failure.
 */
export async function execSupervised(options: ExecOptions): Promise<number> {
  const child = spawn(process.execPath, process.argv.slice(1), {
    env: { ...process.env, [CHILD_ENV]: "1" },
    stdio: "inherit",
  });
  const { code, signal } = await new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
  }>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  if (signal === null && code !== null && code !== 134) return code;
  const message =
    `The script exhausted the sandbox's memory and its process was aborted (${signal ?? `exit ${code}`}): ` +
    `keep less data in memory, or raise the limit`;
  if (options.journal !== undefined && existsSync(options.journal)) {
    const lines = readFileSync(options.journal, "utf8").trim().split("\n").filter(Boolean);
    const last =
      lines.length > 0 ? (JSON.parse(lines[lines.length - 1]!) as JournalEntry) : undefined;
    if (last !== undefined && last.kind !== "run.completed" && last.kind !== "run.failed") {
      const failed: JournalEntry = {
        seq: last.seq + 1,
        kind: "run.failed",
        at: last.at,
        error: { name: "RewindError", code: "MEMORY_LIMIT", message },
      };
      appendFileSync(options.journal, toJournalFile([failed]));
    }
  }
  process.stderr.write(`${red("✗ failed with MEMORY_LIMIT")}\n${message}\n`);
  return 1;
}
