import { existsSync, readFileSync } from "node:fs";
import { RewindError, type JournalEntry } from "@rewind/core";
import { checkReplay } from "@rewind/executor";
import { parseJournalFile } from "@rewind/journal";
import { Sandbox, compileScript, type CompiledScript } from "@rewind/sandbox";
import { client } from "../client.js";
import { green, red } from "../format.js";

/**
 * `rewind replay <run|journal-file> [--script FILE]`: re-executes the script locally against the
 * journal, calling nothing. Exit 0 when it matches, 1 with the first divergence.
 */
export async function replayCommand(target: string, options: { script?: string }): Promise<number> {
  let journal: readonly JournalEntry[];
  let script: CompiledScript;
  if (existsSync(target)) {
    journal = parseJournalFile(readFileSync(target, "utf8"), target);
    if (options.script === undefined) {
      throw new RewindError(
        "INVALID_INPUT",
        `A journal file holds no script: pass the script to check with --script FILE`,
      );
    }
    script = await compileScript({ file: options.script });
  } else {
    const api = client();
    journal = (await api.runs.journal(target)).entries;
    script =
      options.script === undefined
        ? await api.runs.script(target)
        : await compileScript({ file: options.script });
  }
  const sandbox = new Sandbox();
  try {
    const check = await checkReplay(sandbox, script, journal);
    if (check.matches) {
      process.stdout.write(
        `${green("✓")} ${script.entry} replays ${target}: all ${check.entries} journal entries match\n`,
      );
      return 0;
    }
    process.stderr.write(`${red("✗")} ${check.message}\n`);
    return 1;
  } finally {
    sandbox.dispose();
  }
}
