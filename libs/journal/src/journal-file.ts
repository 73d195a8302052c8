import { RewindError, type EntryKind, type JournalEntry } from "@rewind/core";

/**
 * The journal file: the portable form of a journal, JSON Lines, one entry a line, values inlined.
 * `rewind exec --journal` writes it; `--resume`, `rewind replay` and cassettes read it.
 */
export function toJournalFile(entries: readonly JournalEntry[]): string {
  return entries.map((entry) => `${JSON.stringify(entry)}\n`).join("");
}

const REQUIRED: Record<EntryKind, readonly string[]> = {
  "run.started": ["runId", "scriptHash", "input", "seed", "epoch", "toolset", "namespace"],
  "run.cancelled": [],
  "run.quarantined": ["report"],
  "run.released": ["by"],
  call: ["name", "args", "callId"],
  "timer.set": ["due"],
  "timer.cancel": ["timerSeq"],
  output: ["stream", "text"],
  "run.completed": ["result"],
  "run.failed": ["error"],
  "call.result": ["callSeq", "result"],
  "call.error": ["callSeq", "error"],
  "timer.fired": ["timerSeq"],
  signal: ["name", "payload"],
};

/** Parses and checks a journal file; an error names the line and what is wrong with it. */
export function parseJournalFile(text: string, source = "journal file"): JournalEntry[] {
  const entries: JournalEntry[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    const where = `${source} line ${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw invalid(`${where} is not JSON (${(error as Error).message})`);
    }
    if (value === null || typeof value !== "object" || Array.isArray(value))
      throw invalid(`${where} is not an entry object`);
    const entry = value as Record<string, unknown>;
    const kind = entry.kind as EntryKind;
    const required = REQUIRED[kind];
    if (required === undefined)
      throw invalid(`${where} has unknown kind ${JSON.stringify(entry.kind)}`);
    if (entry.seq !== entries.length + 1) {
      throw invalid(
        `${where} has seq ${String(entry.seq)} where ${entries.length + 1} was expected (no gaps)`,
      );
    }
    if (typeof entry.at !== "number") throw invalid(`${where} (${kind}) has no numeric "at"`);
    for (const field of required) {
      if (!(field in entry)) throw invalid(`${where} (${kind}) lacks the field "${field}"`);
    }
    if (entries.length === 0 && kind !== "run.started")
      throw invalid(`${where} must be the run.started entry`);
    entries.push(entry as unknown as JournalEntry);
  }
  if (entries.length === 0) throw invalid(`${source} holds no entries`);
  return entries;
}

function invalid(message: string): RewindError {
  return new RewindError(
    "INVALID_INPUT",
    `${message}: a journal file is JSON Lines written by rewind exec --journal`,
  );
}
