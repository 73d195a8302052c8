import type { ComponentChildren } from "preact";
import { useId } from "preact/hooks";
import type { EntryLabel, JournalEntry, Json, ReplayDivergence } from "./api.js";
import { briefValue, showValue, stackFrames } from "./format.js";
import { entryTitle } from "./journal-model.js";
import { changed, diffLines, hunks, type DiffLine } from "./line-diff.js";
import { lineAt, type ScriptFiles } from "./script-files.js";

/** A divergence as the page has it: a replay check's, or a quarantine report's (labels only). */
export type Divergence = Pick<ReplayDivergence, "seq" | "matched" | "recorded" | "replayed"> & {
  replayedCommands?: ReplayDivergence["replayedCommands"];
};

type Command = NonNullable<ReplayDivergence["replayedCommands"]>[number];

/** Matched rows shown before the mismatch; the earlier ones are folded into one row. */
const MATCHED_SHOWN = 8;
/** Rows shown after the mismatch. */
const AFTER_SHOWN = 12;

/**
 * Where a replay leaves its journal: the recorded entries and the replayed ones side by side by
 * seq with the first mismatch marked, both callsites with their lines from each script version,
 * the argument diff, and the source diff between the two versions; then the actions that fit.
 */
export function DivergenceDiff(props: {
  journal: readonly JournalEntry[];
  divergence: Divergence;
  /** The script the run ran, and the one replayed (the same for a quarantined run). */
  before: ScriptFiles;
  after: ScriptFiles;
  afterName: string;
  children?: ComponentChildren;
}) {
  const { journal, divergence: d, before, after, afterName, children } = props;
  const recordedEntry = journal.find((e) => e.seq === d.seq);
  const replayedCommand = d.replayedCommands?.[0];
  // A failure has no callsite of its own: where it was thrown is its stack's first frame.
  const recordedCallsite =
    d.recorded.callsite ??
    (recordedEntry?.kind === "run.failed" ? thrownAt(recordedEntry.error.stack) : undefined);
  const recordedLine = lineAt(before, recordedCallsite);
  const replayedLine = lineAt(after, d.replayed?.callsite ?? replayedCommand?.callsite);
  const recordedValue = recordedEntry === undefined ? undefined : valueOfEntry(recordedEntry);
  const replayedValue = replayedCommand === undefined ? undefined : valueOfCommand(replayedCommand);
  // A page may hold two diffs (a quarantined run's, a corrected script's in the dialog).
  const titleId = useId();
  return (
    <section class="divergence" aria-labelledby={titleId} data-seq={d.seq}>
      <h3 id={titleId}>
        Divergence at #{d.seq}{" "}
        <span class="muted">
          ({d.matched} {d.matched === 1 ? "entry" : "entries"} matched before it)
        </span>
      </h3>
      <div class="callsites">
        <Callsite
          side="recorded"
          title={`The journal recorded (#${d.seq})`}
          label={recordedCallsite ? { ...d.recorded, callsite: recordedCallsite } : d.recorded}
          line={recordedLine}
          version="as the run ran it"
        />
        <Callsite
          side="replayed"
          title="The script now emits"
          label={d.replayed ?? { kind: "nothing", label: "nothing more before this point" }}
          line={replayedLine}
          version={afterName}
        />
      </div>
      {(recordedValue !== undefined || replayedValue !== undefined) && (
        <>
          <h4>{recordedEntry?.kind === "call" ? "Arguments" : "Values"}: recorded → replayed</h4>
          <DiffView
            label={recordedEntry?.kind === "call" ? "argument diff" : "values diff"}
            lines={diffLines(
              showValue(canonical(recordedValue?.value)),
              showValue(canonical(replayedValue?.value)),
            )}
            all
          />
        </>
      )}
      <h4>The journal and the replay, side by side</h4>
      <SideBySide journal={journal} divergence={d} />
      <h4>Source: as the run ran it → {afterName}</h4>
      <SourceDiff before={before} after={after} />
      {children !== undefined && <div class="buttons">{children}</div>}
    </section>
  );
}

function Callsite(props: {
  side: "recorded" | "replayed";
  title: string;
  label: EntryLabel;
  line: ReturnType<typeof lineAt>;
  version: string;
}) {
  const { side, title, label, line, version } = props;
  return (
    <figure class={`callsite ${side}`} data-side={side}>
      <figcaption>{title}</figcaption>
      <p class="mono label">{label.label}</p>
      <p class="muted">
        {label.callsite ?? "no callsite"} <span>({version})</span>
      </p>
      {line !== undefined ? (
        <pre class="source-line" tabIndex={0}>
          <span class="number">{line.line}</span> {line.text}
        </pre>
      ) : (
        <p class="muted">No source line for it.</p>
      )}
    </figure>
  );
}

function SideBySide({
  journal,
  divergence: d,
}: {
  journal: readonly JournalEntry[];
  divergence: Divergence;
}) {
  const commands = d.replayedCommands ?? [];
  const rows = journal.filter(
    (e) => e.seq >= d.seq - MATCHED_SHOWN && e.seq <= d.seq + AFTER_SHOWN,
  );
  const folded = Math.max(0, d.seq - MATCHED_SHOWN - 1);
  // After the mismatch the script's later commands follow it in order (they have no seq yet).
  const replayedAt = (seq: number): string => {
    if (seq === d.seq) return d.replayed?.label ?? "nothing more";
    const next = commands[seq - d.seq];
    return next === undefined ? "—" : labelOfCommand(next);
  };
  return (
    <table class="side-by-side">
      <thead>
        <tr>
          <th scope="col">seq</th>
          <th scope="col">recorded</th>
          <th scope="col">replayed</th>
        </tr>
      </thead>
      <tbody>
        {folded > 0 && (
          <tr class="folded">
            <td>#1–#{folded}</td>
            <td colSpan={2}>{folded} entries matched</td>
          </tr>
        )}
        {rows.map((entry) => {
          const state = entry.seq < d.seq ? "match" : entry.seq === d.seq ? "mismatch" : "after";
          return (
            <tr key={entry.seq} class={state} data-seq={entry.seq} data-state={state}>
              <td>
                #{entry.seq}
                {state === "mismatch" && <strong class="marker"> first mismatch</strong>}
              </td>
              <td class="mono">{entry.seq === d.seq ? d.recorded.label : labelOfEntry(entry)}</td>
              <td class="mono">{state === "match" ? "= the same" : replayedAt(entry.seq)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function SourceDiff({ before, after }: { before: ScriptFiles; after: ScriptFiles }) {
  const names = [...new Set([...before.keys(), ...after.keys()])];
  const diffs = names
    .map((name) => ({ name, lines: diffLines(before.get(name) ?? "", after.get(name) ?? "") }))
    .filter((d) => changed(d.lines));
  if (diffs.length === 0)
    return (
      <p class="muted source-same">
        The same script on both sides: the replay diverges without any change to it (the platform or
        the journal, not the script).
      </p>
    );
  return (
    <>
      {diffs.map(({ name, lines }) => (
        <figure class="source-diff" key={name} data-file={name}>
          <figcaption>
            {name}
            {!before.has(name) ? " (new)" : !after.has(name) ? " (removed)" : ""}
          </figcaption>
          <DiffView label={`diff of ${name}`} lines={lines} />
        </figure>
      ))}
    </>
  );
}

function DiffView({ lines, label, all }: { lines: DiffLine[]; label: string; all?: boolean }) {
  const shown = all ? lines : hunks(lines);
  return (
    <pre class="diff" tabIndex={0} aria-label={label}>
      {shown.map((line, index) =>
        line === null ? (
          <span key={index} class="gap">
            {"…\n"}
          </span>
        ) : (
          <span key={index} class={line.op}>
            {line.op === "added" ? "+ " : line.op === "removed" ? "- " : "  "}
            {line.text}
            {"\n"}
          </span>
        ),
      )}
    </pre>
  );
}

function valueOfEntry(entry: JournalEntry): { value: Json } | undefined {
  switch (entry.kind) {
    case "call":
      return { value: entry.args };
    case "output":
      return { value: entry.text };
    case "run.completed":
      return { value: entry.result };
    case "run.failed":
      return { value: { name: entry.error.name, message: entry.error.message } };
    case "timer.set":
      return { value: entry.due };
    default:
      return undefined;
  }
}

function valueOfCommand(command: Command): { value: Json } | undefined {
  const c = command as Record<string, unknown>;
  const field = {
    call: "args",
    output: "text",
    "run.completed": "result",
    "run.failed": "error",
    "timer.set": "due",
  }[command.kind];
  if (command.kind === "run.failed") {
    const error = c.error as { name?: unknown; message?: unknown } | undefined;
    return { value: { name: String(error?.name), message: String(error?.message) } };
  }
  return field === undefined || !(field in c) ? undefined : { value: c[field] as Json };
}

function labelOfEntry(entry: JournalEntry): string {
  const value = valueOfEntry(entry);
  return value === undefined
    ? entryTitle(entry)
    : `${entryTitle(entry)} ${briefValue(value.value, 60)}`;
}

function labelOfCommand(command: Command): string {
  const c = command as Record<string, unknown>;
  const value = valueOfCommand(command);
  const name = command.kind === "call" ? `call ${String(c.name)}` : command.kind;
  return value === undefined ? name : `${name} ${briefValue(value.value, 60)}`;
}

/**
 * Keys in sorted order, as the journal stores values (canonical JSON): the script's own order
 * would show every reordered key as changed when only one value differs.
 */
function canonical(value: Json | undefined): Json | undefined {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => canonical(item) ?? null);
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, canonical((value as Record<string, Json>)[key]) ?? null]),
  );
}

/** The first `file:line:column` of a source-mapped stack ("at price (lib/price.ts:2:27)"). */
function thrownAt(stack: string | undefined): string | undefined {
  return stackFrames(stack)[0];
}
