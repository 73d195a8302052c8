import { readFileSync, writeFileSync } from "node:fs";
import { parseJournalFile, toJournalFile } from "@rewind/journal";
import { assertReplayableHere } from "@rewind/sandbox";
import { CassetteMissError, runWithCassette } from "@rewind/testing";
import { client } from "../client.js";
import { green, red } from "../format.js";

/** `rewind cassette <run> [-o FILE]`: the run's journal file (values inlined, with its script hash). */
export async function cassetteCommand(
  runId: string,
  options: { output?: string },
): Promise<number> {
  const { entries } = await client().runs.journal(runId);
  const file = toJournalFile(entries);
  if (options.output === undefined) process.stdout.write(file);
  else {
    writeFileSync(options.output, file);
    process.stderr.write(
      `${green("✓")} ${entries.length} entries of ${runId} written to ${options.output}\n`,
    );
  }
  return 0;
}

/** `rewind test <script> --cassette FILE`: the script against a real run's answers, in virtual time. */
export async function testCommand(script: string, options: { cassette: string }): Promise<number> {
  // The cassette's run is replayed on this Node: it must be the runtime of the cassette's epoch.
  assertReplayableHere(
    parseJournalFile(readFileSync(options.cassette, "utf8"), options.cassette),
    "rewind test --cassette",
  );
  try {
    const run = await runWithCassette({ script, cassette: options.cassette });
    for (const line of run.output) process.stdout.write(line);
    if (run.status === "completed") {
      process.stdout.write(`${JSON.stringify(run.result)}\n`);
      process.stderr.write(`${green("✓")} ${script} passes against ${options.cassette}\n`);
      return 0;
    }
    process.stderr.write(
      `${red("✗")} the run ${run.status}${run.error ? `: ${run.error.message}` : ""}\n`,
    );
    return 1;
  } catch (error) {
    if (!(error instanceof CassetteMissError)) throw error;
    process.stderr.write(`${red("✗")} ${error.message}\n`);
    return 1;
  }
}
