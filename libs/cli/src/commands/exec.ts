import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { RewindError, isSeed, type Json, type JournalEntry } from "@rewind/core";
import { runInProcess, type ScheduledSignal } from "@rewind/executor";
import { formatDivergence, parseJournalFile, relative, toJournalFile } from "@rewind/journal";
import { Sandbox, assertReplayableHere } from "@rewind/sandbox";
import { parseDuration } from "@rewind/core";
import type { Toolset } from "@rewind/sdk";
import { loadToolsets } from "../load-toolset.js";
import { CHILD_ENV, execSupervised } from "./exec-supervised.js";
import { compileCached } from "../compile-cache.js";

export interface ExecOptions {
  input?: string;
  tools?: string;
  seed?: string;
  journal?: string;
  resume?: string;
  signal?: string[];
  start?: string;
  fork?: string;
  at?: string;
}

/** Exit codes of `rewind exec`: the contract's 0, 1 and 3, and 2 for a run left waiting. */
export const EXIT = { completed: 0, failed: 1, cancelled: 1, waiting: 2, diverged: 3 } as const;

export async function execCommand(scriptFile: string, options: ExecOptions): Promise<number> {
  if (process.env[CHILD_ENV] === undefined) return execSupervised(options);
  const input = parseJsonOption(options.input, "--input");
  if (options.seed !== undefined && !isSeed(options.seed)) {
    throw new RewindError(
      "INVALID_INPUT",
      `--seed must be 64 hex digits (256 bits), got ${options.seed.length} characters`,
    );
  }
  const startAt = options.start === undefined ? undefined : Date.parse(options.start);
  if (startAt !== undefined && Number.isNaN(startAt)) {
    throw new RewindError(
      "INVALID_INPUT",
      `--start must be an ISO date like 2025-01-01T00:00:00Z, got ${options.start}`,
    );
  }
  const toolset = options.tools === undefined ? undefined : await onlyToolset(options.tools);
  const resume =
    options.resume === undefined
      ? undefined
      : parseJournalFile(readFileSync(options.resume, "utf8"), options.resume);
  const signals = (options.signal ?? []).map(parseSignal);
  const parent =
    options.fork === undefined
      ? undefined
      : parseJournalFile(readFileSync(options.fork, "utf8"), options.fork);
  // Both replay a journal on this Node: it must be the runtime of the journal's epoch.
  if (resume !== undefined) assertReplayableHere(resume, "rewind exec --resume");
  if (parent !== undefined) assertReplayableHere(parent, "rewind exec --fork");
  const at = options.at === undefined ? undefined : Number(options.at);
  if (at !== undefined && (!Number.isInteger(at) || at < 2)) {
    throw new RewindError(
      "INVALID_INPUT",
      `--at must be the seq (2 or more) from which the fork runs live, got ${options.at}`,
    );
  }
  const script = await compileCached(scriptFile);

  const out = options.journal;
  if (out !== undefined) writeFileSync(out, "");
  const sandbox = new Sandbox();
  try {
    const result = await runInProcess({
      script,
      sandbox,
      input,
      ...(options.seed !== undefined ? { seed: options.seed } : {}),
      ...(startAt !== undefined ? { startAt } : {}),
      ...(toolset !== undefined ? { toolset } : {}),
      ...(resume !== undefined ? { resume } : {}),
      ...(parent !== undefined ? { fork: { parent, ...(at === undefined ? {} : { at }) } } : {}),
      signals,
      // Write-ahead: each batch reaches the journal file before its effects happen.
      onCommit: (entries) => {
        if (out !== undefined) appendFileSync(out, toJournalFile(entries));
      },
      onOutput: (entry) =>
        (entry.stream === "stdout" ? process.stdout : process.stderr).write(entry.text),
    });
    if (out !== undefined && resume !== undefined) {
      writeFileSync(out, toJournalFile(result.journal)); // the whole journal: the prefix and what followed
    }
    if (result.reused !== undefined) {
      process.stderr.write(
        `forked ${String((parent![0] as { runId?: string }).runId)}: ${result.reused} entries reused, the rest live\n`,
      );
    }
    report(result.status, result.journal, result);
    return EXIT[result.status];
  } finally {
    sandbox.dispose();
  }
}

function report(
  status: keyof typeof EXIT,
  journal: readonly JournalEntry[],
  result: {
    result?: Json;
    error?: { name: string; message: string; code?: string; stack?: string };
    divergence?: Parameters<typeof formatDivergence>[0];
  },
): void {
  const first = journal[0]!;
  const last = journal[journal.length - 1]!;
  const summary = `${journal.length} journal entries, virtual time ${relative(last.at - first.at)}`;
  switch (status) {
    case "completed":
      process.stderr.write(`✓ completed (${summary})\n`);
      process.stdout.write(`${JSON.stringify(result.result)}\n`);
      return;
    case "failed":
      process.stderr.write(`✗ failed with ${result.error?.code ?? "an error"} (${summary})\n`);
      process.stderr.write(
        `${result.error?.stack ?? `${result.error?.name}: ${result.error?.message}`}\n`,
      );
      return;
    case "cancelled":
      process.stderr.write(`✗ cancelled (${summary})\n`);
      return;
    case "waiting":
      process.stderr.write(
        `… the run is waiting and nothing more is scheduled (${summary}): ` +
          `send what it waits for with --signal NAME=JSON@DELAY, e.g. --signal approval='{"approved":true}'@1h\n`,
      );
      return;
    case "diverged":
      process.stderr.write(`✗ ${formatDivergence(result.divergence!)}\n`);
      return;
  }
}

async function onlyToolset(file: string): Promise<Toolset> {
  const toolsets = await loadToolsets(file);
  if (toolsets.length > 1) {
    throw new RewindError(
      "INVALID_INPUT",
      `${file} exports ${toolsets.length} toolsets; rewind exec takes a module with one`,
    );
  }
  return toolsets[0]!;
}

function parseJsonOption(text: string | undefined, flag: string): Json {
  if (text === undefined) return null;
  try {
    return JSON.parse(text) as Json;
  } catch (error) {
    throw new RewindError(
      "INVALID_INPUT",
      `${flag} is not valid JSON (${(error as Error).message}): quote it, e.g. ${flag} '{"n": 1}'`,
    );
  }
}

/** NAME, NAME=JSON, NAME@DELAY or NAME=JSON@DELAY (DELAY like "1h"; default: at once). */
function parseSignal(spec: string): ScheduledSignal {
  const match = /^([^=@]+)(?:=(.*?))?(?:@([0-9.]+(?:ms|s|m|h|d|w)?))?$/.exec(spec);
  if (match === null) {
    throw new RewindError(
      "INVALID_INPUT",
      `--signal ${spec} is not NAME[=JSON][@DELAY], e.g. approval='{"ok":true}'@1h`,
    );
  }
  return {
    name: match[1]!,
    payload: match[2] === undefined ? null : parseJsonOption(match[2], `--signal ${match[1]}`),
    afterMs:
      match[3] === undefined
        ? 0
        : parseDuration(/^\d+$/.test(match[3]) ? Number(match[3]) : match[3], "--signal's delay"),
  };
}
