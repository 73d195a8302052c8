import { readFileSync } from "node:fs";
import { RewindError, type Json, type JournalEntry } from "@rewind/core";
import type { RunStatus } from "@rewind/sdk";
import { client } from "../client.js";
import { compileCached } from "../compile-cache.js";
import { dim, journalTable, red, statusColor } from "../format.js";
import { waitingFor } from "../waiting.js";

/** A script hash as `runs list` shows it: enough digits to tell scripts apart. */
const shortHash = (hash: string) => `${hash.slice(0, 19)}`;

const ENDINGS = new Set(["run.completed", "run.failed", "run.cancelled", "run.quarantined"]);

/** `rewind run`: compile, submit, print the id; with --wait stream the output and the result. */
export async function runCommand(
  scriptFile: string,
  options: { input?: string; toolset?: string; wait?: boolean },
): Promise<number> {
  const script = await compileCached(scriptFile);
  const api = client();
  const input = parseJson(options.input, "--input");
  const { id } = await api.runs.start({
    script: { entry: script.entry, code: script.code, sourceMap: script.sourceMap },
    input,
    ...(options.toolset === undefined ? {} : { toolset: options.toolset }),
  });
  process.stdout.write(`${id}\n`);
  if (!options.wait) return 0;
  // The journal is the only source of output: its stream sends each entry as it commits.
  const seen: JournalEntry[] = [];
  let waitingSince: number | undefined;
  const onStatus = (status: RunStatus) => {
    waitingSince = status === "waiting" ? Date.now() : undefined;
  };
  // A run that waits a moment is said to, with what it waits for, rather than going quiet.
  const quiet = setInterval(() => {
    if (waitingSince === undefined || Date.now() - waitingSince < 1_000) return;
    waitingSince = undefined;
    process.stderr.write(
      `${dim(`rewind: ${id} is waiting for ${waitingFor(seen, id).join(", and ")}; still waiting (Ctrl-C stops this command, not the run)`)}\n`,
    );
  }, 250);
  let last: JournalEntry | undefined;
  try {
    for await (const entry of api.runs.follow(id, { onStatus })) {
      last = entry;
      seen.push(entry);
      if (entry.kind === "output")
        (entry.stream === "stdout" ? process.stdout : process.stderr).write(entry.text);
      if (entry.kind === "signal")
        process.stderr.write(`${dim(`signal ${entry.name} received`)}\n`);
      if (ENDINGS.has(entry.kind)) return report(entry);
    }
  } finally {
    clearInterval(quiet);
  }
  // Ended by something that is no entry of the kinds above: say what the journal ends with.
  if (last === undefined) throw new RewindError("UNAVAILABLE", `The journal of ${id} is empty`);
  return report(last);
}

function report(e: JournalEntry): number {
  switch (e.kind) {
    case "run.completed":
      process.stdout.write(`${JSON.stringify(e.result)}\n`);
      return 0;
    case "run.failed":
      process.stderr.write(
        `${red("✗ failed")} ${e.error.code ?? ""}: ${e.error.stack ?? e.error.message}\n`,
      );
      return 1;
    default:
      process.stderr.write(`${statusColor(e.kind.replace("run.", ""))}\n`);
      return 1;
  }
}

export async function listCommand(options: {
  status?: string;
  script?: string;
  toolset?: string;
  epoch?: string;
  search?: string;
  json?: boolean;
  limit?: string;
}): Promise<number> {
  const { runs } = await client().runs.list({
    ...(options.status === undefined ? {} : { status: options.status.split(",") as RunStatus[] }),
    ...(options.script === undefined ? {} : { script: options.script }),
    ...(options.toolset === undefined ? {} : { toolset: options.toolset }),
    ...(options.epoch === undefined ? {} : { epoch: Number(options.epoch) }),
    ...(options.search === undefined ? {} : { q: options.search }),
    limit: Number(options.limit ?? 50),
  });
  if (options.json) {
    process.stdout.write(`${JSON.stringify(runs, null, 2)}\n`);
    return 0;
  }
  if (runs.length === 0) {
    process.stdout.write(dim("no runs\n"));
    return 0;
  }
  const width = Math.max(7, ...runs.map((run) => run.toolset.length));
  // A script by its file name where the API knows it, else by its hash.
  const scriptOf = (run: (typeof runs)[number]) => run.script ?? shortHash(run.scriptHash);
  const scriptWidth = Math.max(6, ...runs.map((run) => scriptOf(run).length));
  // statusColor adds escape codes where the output is a terminal: pad the plain word.
  const status = (s: string) => `${statusColor(s)}${" ".repeat(Math.max(0, 11 - s.length))}`;
  process.stdout.write(
    dim(
      `${"RUN".padEnd(30)}  ${"STATUS".padEnd(11)}  ${"TOOLSET".padEnd(width)}  ${"SCRIPT".padEnd(scriptWidth)}  CREATED\n`,
    ),
  );
  for (const run of runs)
    process.stdout.write(
      `${run.id.padEnd(30)}  ${status(run.status)}  ${run.toolset.padEnd(width)}  ${scriptOf(run).padEnd(scriptWidth)}  ${dim(run.createdAt)}\n`,
    );
  return 0;
}

export async function showCommand(runId: string, options: { json?: boolean }): Promise<number> {
  const api = client();
  const run = await api.runs.get(runId);
  const { entries } = await api.runs.journal(runId);
  const reusedUpTo = run.parent
    ? reusedPrefix(entries, (await api.runs.journal(run.parent.runId)).entries)
    : undefined;
  if (options.json) {
    const fork = reusedUpTo === undefined ? {} : { reused: reusedUpTo - 1 };
    process.stdout.write(`${JSON.stringify({ ...run, ...fork, journal: entries }, null, 2)}\n`);
    return 0;
  }
  const lines = [
    `run      ${run.id}`,
    `status   ${statusColor(run.status)}`,
    `toolset  ${run.toolset}`,
    `epoch    ${run.epoch}`,
  ];
  // Its file first (what the reader wrote), then the hash (what is stored and replayed).
  lines.push(`script   ${run.script === undefined ? "" : `${run.script} `}${run.scriptHash}`);
  if (run.status === "waiting") {
    const [first, ...more] = waitingFor(entries, run.id);
    lines.push(`waiting  for ${first}`, ...more.map((wait) => `         and ${wait}`));
  }
  // A fork's parent seq is the --at it was given (0: none, it went live at the first difference).
  if (run.parent)
    lines.push(
      `parent   ${run.parent.runId}${run.parent.seq > 0 ? ` (live from seq ${run.parent.seq} at the latest)` : ""}`,
    );
  if (reusedUpTo !== undefined)
    lines.push(`reused   ${reusedUpTo - 1} entries of its parent; the rest ran live`);
  // A capture policy redacted what the script saw (docs/capture-policy.md): say where it starts.
  if (run.replayable === "not-strict" && run.firstRedacted !== undefined)
    lines.push(
      `replay   not strictly replayable from seq ${run.firstRedacted.seq} (redacted: ${run.firstRedacted.rules.join(", ")}); fork before it with --at ${run.firstRedacted.seq}`,
    );
  if (run.result !== undefined) lines.push(`result   ${JSON.stringify(run.result)}`);
  if (run.error !== undefined) lines.push(`error    ${run.error.code ?? ""} ${run.error.message}`);
  process.stdout.write(`${lines.join("\n")}\n\n${journalTable(entries, reusedUpTo)}\n`);
  return 0;
}

/** A fork's entries are reused while they equal its parent's, seq for seq (after run.started). */
function reusedPrefix(fork: readonly JournalEntry[], parent: readonly JournalEntry[]): number {
  let seq = 1;
  while (
    seq < fork.length &&
    seq < parent.length &&
    JSON.stringify(fork[seq]) === JSON.stringify(parent[seq])
  )
    seq++;
  return seq;
}

export async function signalCommand(
  runId: string,
  name: string,
  payload?: string,
): Promise<number> {
  await client().runs.signal(runId, name, parseJson(payload, "the signal's payload"));
  process.stdout.write(`signal ${name} sent to ${runId}\n`);
  return 0;
}

export async function cancelCommand(runId: string): Promise<number> {
  await client().runs.cancel(runId);
  process.stdout.write(`cancel requested for ${runId}\n`);
  return 0;
}

function parseJson(text: string | undefined, what: string): Json {
  if (text === undefined) return null;
  try {
    return JSON.parse(text.startsWith("@") ? readFileSync(text.slice(1), "utf8") : text) as Json;
  } catch (error) {
    throw new RewindError(
      "INVALID_INPUT",
      `${what} is not valid JSON (${(error as Error).message}): quote it, e.g. '{"n": 1}', or pass @file.json`,
    );
  }
}
