import type { ExploreFile, RunScript, RunView } from "@rewind/contract";
import type { JournalEntry, Json } from "@rewind/core";

/**
 * A value whose JSON is longer than this is left out of an explore file by default: 64 KiB,
 * the size past which the store keeps a value in the blob store, not in its row.
 */
export const DEFAULT_VALUE_LIMIT = 64 * 1024;
/** All values of one file together: past this, every further value over 1 KiB is left out. */
export const VALUES_BUDGET = 32 * 1024 * 1024;
const ALWAYS_KEPT = 1024;

/** The entry fields that hold tenants' values or text, by kind. */
const VALUE_FIELDS: Partial<Record<JournalEntry["kind"], string>> = {
  "run.started": "input",
  call: "args",
  "call.result": "result",
  signal: "payload",
  "run.completed": "result",
  output: "text",
};

export interface ExploreInput {
  from: string;
  run: RunView;
  entries: readonly JournalEntry[];
  script?: RunScript;
  scriptProblem?: string;
  valueLimit?: number;
}

/**
 * The data of an explore file: the run as given, each value longer than the limit (or past the
 * file's budget) replaced by a short string and named in `omitted`, so the page says where one
 * is missing rather than showing a wrong value.
 */
export function exploreData(input: ExploreInput, madeAt = new Date()): ExploreFile {
  const valueLimit = input.valueLimit ?? DEFAULT_VALUE_LIMIT;
  const omitted: Record<string, number> = {};
  let spent = 0;
  const bound = (where: string, value: Json): Json => {
    const size = (JSON.stringify(value) ?? "").length;
    if (size <= ALWAYS_KEPT || (size <= valueLimit && spent + size <= VALUES_BUDGET)) {
      spent += size;
      return value;
    }
    omitted[where] = size;
    return `(left out of this file: ${size} characters)`;
  };
  const entries = input.entries.map((entry) => {
    const field = VALUE_FIELDS[entry.kind];
    if (field === undefined) return entry;
    const value = (entry as unknown as Record<string, Json>)[field]!;
    const kept = bound(`${entry.seq}.${field}`, value);
    return kept === value ? entry : { ...entry, [field]: kept };
  });
  const run =
    input.run.result === undefined
      ? input.run
      : { ...input.run, result: bound("run.result", input.run.result) };
  return {
    version: 1,
    madeAt: madeAt.toISOString(),
    from: input.from,
    run,
    entries,
    ...(input.script === undefined ? {} : { script: input.script }),
    ...(input.scriptProblem === undefined ? {} : { scriptProblem: input.scriptProblem }),
    omitted,
    valueLimit,
  };
}

const ENDED_BY: Partial<Record<JournalEntry["kind"], RunView["status"]>> = {
  "run.completed": "completed",
  "run.failed": "failed",
  "run.cancelled": "cancelled",
  "run.quarantined": "quarantined",
};

/**
 * A run's view as the API would give it, from its journal alone (a journal file has no row):
 * its status is that of the last entry that ends or quarantines it, else `waiting`; its times
 * are logical.
 */
export function runViewOfJournal(entries: readonly JournalEntry[], scriptName?: string): RunView {
  const started = entries[0];
  if (started?.kind !== "run.started")
    throw new Error("A journal opens with its run.started entry: this one does not");
  let status: RunView["status"] = "waiting";
  let ended: JournalEntry | undefined;
  for (const entry of entries) {
    const next = ENDED_BY[entry.kind];
    if (next !== undefined) {
      status = next;
      ended = next === "quarantined" ? undefined : entry;
    } else if (entry.kind === "run.released") status = "waiting";
  }
  const last = entries[entries.length - 1]!;
  const iso = (at: number) => new Date(at).toISOString();
  return {
    id: started.runId,
    status,
    namespace: started.namespace,
    scriptHash: started.scriptHash,
    ...(scriptName === undefined ? {} : { script: scriptName }),
    toolset: started.toolset,
    epoch: started.epoch,
    lastSeq: last.seq,
    ...(started.parent === undefined ? {} : { parent: started.parent }),
    ...(ended?.kind === "run.completed" ? { result: ended.result } : {}),
    ...(ended?.kind === "run.failed" ? { error: ended.error } : {}),
    createdAt: iso(started.at),
    updatedAt: iso(last.at),
    ...(ended === undefined ? {} : { endedAt: iso(ended.at) }),
  };
}
