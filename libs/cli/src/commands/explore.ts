import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { RewindError, type JournalEntry } from "@rewind/core";
import { DEFAULT_VALUE_LIMIT, exploreData, exploreHtml, runViewOfJournal } from "@rewind/dashboard";
import { parseJournalFile } from "@rewind/journal";
import { RewindApiError, type RunScript } from "@rewind/sdk";
import { client } from "../client.js";
import { compileCached } from "../compile-cache.js";
import { green, yellow } from "../format.js";

interface ExploreOptions {
  script?: string;
  output?: string;
  valueLimit?: string;
}

/**
 * `rewind explore <run | journal-file --script S> [-o report.html]`: the run's page as one HTML
 * file that needs no server and makes no request (to attach to a bug report). A run is read from
 * the API (its view, journal and script); a journal file from disk, with the script it ran.
 */
export async function exploreCommand(target: string, options: ExploreOptions): Promise<number> {
  const valueLimit = parseValueLimit(options.valueLimit);
  const input = existsSync(target)
    ? await fromJournalFile(target, options.script)
    : await fromRun(target, options.script);
  const data = exploreData({ ...input, valueLimit });
  const output = options.output ?? `rewind-${safeName(data.run.id)}.html`;
  writeFileSync(output, exploreHtml(data));
  const left = Object.keys(data.omitted).length;
  process.stdout.write(
    `${green("✓")} ${data.entries.length} entries of ${data.run.id} written to ${output} (open it in a browser: it makes no request)\n`,
  );
  if (left > 0)
    process.stderr.write(
      `${yellow("!")} ${left} ${left === 1 ? "value" : "values"} longer than ${valueLimit} characters left out (the page says where): --value-limit raises the bound\n`,
    );
  return 0;
}

async function fromRun(runId: string, scriptFile: string | undefined) {
  const api = client();
  const run = await api.runs.get(runId);
  const { entries } = await api.runs.journal(runId);
  if (scriptFile !== undefined)
    return { from: runId, run, entries, script: await compiled(scriptFile) };
  try {
    return { from: runId, run, entries, script: await api.runs.script(runId) };
  } catch (error) {
    if (!(error instanceof RewindApiError)) throw error;
    // The page still shows the header and the journal, and says why the script is missing.
    return {
      from: runId,
      run,
      entries,
      scriptProblem: `The run's script could not be read: ${error.message}`,
    };
  }
}

async function fromJournalFile(file: string, scriptFile: string | undefined) {
  if (scriptFile === undefined)
    throw new RewindError(
      "INVALID_INPUT",
      `A journal file holds no script: pass the one ${file} ran with --script FILE`,
    );
  const entries: readonly JournalEntry[] = parseJournalFile(readFileSync(file, "utf8"), file);
  const script = await compiled(scriptFile);
  const run = runViewOfJournal(entries, script.entry);
  if (run.scriptHash !== script.hash)
    process.stderr.write(
      `${yellow("!")} ${scriptFile} compiles to ${script.hash.slice(0, 19)}…, not the ${run.scriptHash.slice(0, 19)}… ${file} ran: its lines may not be those the journal's callsites name\n`,
    );
  return { from: path.basename(file), run, entries, script };
}

async function compiled(file: string): Promise<RunScript> {
  const script = await compileCached(file);
  return { hash: script.hash, entry: script.entry, code: script.code, sourceMap: script.sourceMap };
}

function parseValueLimit(text: string | undefined): number {
  if (text === undefined) return DEFAULT_VALUE_LIMIT;
  const limit = Number(text);
  if (!Number.isSafeInteger(limit) || limit < 0)
    throw new RewindError(
      "INVALID_INPUT",
      `--value-limit must be a number of characters (a whole number ≥ 0), got ${JSON.stringify(text)}`,
    );
  return limit;
}

/** A run id as a file name: ids are `run_…`, but one from a journal file is the file's to say. */
function safeName(id: string): string {
  return id.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 80);
}
