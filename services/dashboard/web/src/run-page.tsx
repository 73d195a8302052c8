import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { Api, type DeferredValue, type JournalEntry, type RunScript, type RunView } from "./api.js";
import type { RunSource } from "./data-source.js";
import { duration, localTime } from "./format.js";
import { EntryDetail, JournalTimeline } from "./journal-view.js";
import { pinJournal, type Place } from "./journal-model.js";
import { runHref } from "./route.js";
import { ForkOrigin } from "./fork-origin.js";
import { QuarantinePanel } from "./quarantine-panel.js";
import { RunActions } from "./run-actions.js";
import { filesOf } from "./script-files.js";
import { SourceView } from "./source-view.js";
import { usePoll } from "./use-poll.js";
import { DeferredValues, ValueView } from "./value-view.js";

const ENDED = new Set(["completed", "failed", "cancelled"]);
/** A line run 10,000 times (a loop) lists this many of its entries beside the script. */
const LINE_ENTRIES_SHOWN = 50;

/** Everything about one run: header, its script with the journal pinned to lines, the timeline, actions. */
export function RunPage({
  api,
  id,
  refused,
}: {
  /** The live API, or an explore file's data (which answers no action). */
  api: RunSource;
  id: string;
  refused: (m: string) => void;
}) {
  const journal = useJournal(api, id, refused);
  const run = usePoll(() => api.run(id), [id], refused);
  const forks = usePoll(
    () => api.runs(new URLSearchParams({ parent: id, limit: "20" })),
    [id],
    refused,
  );
  const [script, setScript] = useState<RunScript>();
  const [scriptProblem, setScriptProblem] = useState<string>();
  useEffect(() => {
    setScript(undefined);
    api.script(id).then(setScript, (error: Error) => setScriptProblem(error.message));
  }, [id]);

  const entries = journal.entries;
  const values = useMemo(
    () => ({
      deferred: journal.deferred,
      ...(api.value === undefined ? {} : { load: (ref: string) => api.value!(id, ref) }),
    }),
    [journal.deferred, api, id],
  );
  // Every file of the script (a multi-file script's helpers too), the entry file first.
  const files = useMemo(
    () => (script === undefined ? new Map<string, string>() : filesOf(script.sourceMap)),
    [script],
  );
  const names = useMemo(() => {
    const all = [...files.keys()];
    const entry = script === undefined ? undefined : entryName(all, script.entry);
    return entry === undefined ? all : [entry, ...all.filter((name) => name !== entry)];
  }, [files, script]);
  const entryFile = names[0] ?? script?.entry ?? "";
  const pinned = useMemo(() => pinJournal(entries, names), [entries, names]);
  const last = entries[entries.length - 1]?.seq ?? 1;
  // The scrubber follows the journal's end until the operator moves it.
  const [scrubbed, setScrubbed] = useState<number>();
  const scrub = Math.min(scrubbed ?? last, last);
  const [line, setLine] = useState<Place>();
  const [seq, setSeq] = useState<number>();
  const current = pinned.placeOfSeq.get(scrub);
  // The file on screen: the entry file until the operator, or a pick in another file, changes it.
  const [chosenFile, setChosenFile] = useState<string>();
  const file = chosenFile !== undefined && files.has(chosenFile) ? chosenFile : entryFile;
  const source = files.get(file);
  /** Selects a place (or none), showing its file. */
  const select = (place: Place | undefined) => {
    setLine(place);
    if (place !== undefined) setChosenFile(place.file);
  };

  // Once seen quarantined, the panel stays: a release moves the run on, and what was done (and
  // the diff that led to it) is still worth reading.
  const [wasQuarantined, setWasQuarantined] = useState(false);
  // A fork's entries reused from its parent (#2 to this seq), marked in the journal too.
  const [reusedThrough, setReusedThrough] = useState(1);
  const view = run.data;
  useEffect(() => {
    if (view?.status === "quarantined") setWasQuarantined(true);
  }, [view?.status]);
  if (view === undefined)
    return <p class={run.error ? "problem" : "muted"}>{run.error ?? `Loading ${id}…`}</p>;
  const started = entries[0]?.kind === "run.started" ? entries[0] : undefined;
  const picked = seq === undefined ? undefined : entries.find((e) => e.seq === seq);
  const lineEntries =
    line === undefined ? [] : (pinned.byFile.get(line.file)?.get(line.line) ?? []);
  return (
    <DeferredValues.Provider value={values}>
      <div class="run-page">
        <RunHeader
          run={view}
          started={started}
          reached={entries[entries.length - 1]?.at}
          forks={forks.data?.runs ?? []}
        />
        {(run.error ?? journal.error) && <p class="problem">{run.error ?? journal.error}</p>}
        {api instanceof Api ? (
          <>
            {(view.status === "quarantined" || wasQuarantined) && (
              <QuarantinePanel
                api={api}
                run={view}
                script={script}
                journal={entries}
                changed={run.refresh}
              />
            )}
            {view.parent !== undefined && (
              <ForkOrigin api={api} run={view} journal={entries} onReused={setReusedThrough} />
            )}
            <RunActions
              api={api}
              run={view}
              script={script}
              journal={entries}
              changed={run.refresh}
            />
          </>
        ) : (
          <p class="offline-note muted" id="offline-note">
            An offline copy (<code>rewind explore</code>): signals, cancel, fork and replay checks
            need the server: open this run in its dashboard to act on it.
          </p>
        )}
        <div class="run-body">
          {source !== undefined ? (
            <SourceView
              file={file}
              files={names}
              entryFile={entryFile}
              source={source}
              pinned={pinned}
              selected={line?.file === file ? line.line : undefined}
              current={current?.file === file ? current.line : undefined}
              onFile={setChosenFile}
              onSelect={(picked) => {
                // A mark shows its line's entries; pressed again while they are shown, hides
                // them (while one entry of the line is shown, it shows them all instead).
                const shown = line?.file === file && picked === line.line && seq === undefined;
                select(shown ? undefined : { file, line: picked });
                setSeq(undefined);
              }}
            />
          ) : (
            <p class="muted">
              {scriptProblem ??
                (script
                  ? `The source map of ${script.entry} holds no source.`
                  : "Loading the script…")}
            </p>
          )}
          <aside class="details" aria-live="polite" aria-label="Entries">
            {picked !== undefined ? (
              <EntryDetail entry={picked} pinned={pinned} />
            ) : line !== undefined ? (
              <>
                <h3>
                  {line.file === entryFile ? "Line" : `${line.file} line`} {line.line}:{" "}
                  {lineEntries.length} {lineEntries.length === 1 ? "entry" : "entries"}
                </h3>
                {lineEntries.slice(0, LINE_ENTRIES_SHOWN).map((entry) => (
                  <EntryDetail key={entry.seq} entry={entry} pinned={pinned} />
                ))}
                {lineEntries.length > LINE_ENTRIES_SHOWN && (
                  <p class="muted">
                    The first {LINE_ENTRIES_SHOWN} are shown: pick the others in the journal.
                  </p>
                )}
              </>
            ) : (
              <p class="muted">Pick a mark beside a line, or an entry of the journal.</p>
            )}
          </aside>
        </div>
        <JournalTimeline
          entries={entries}
          pinned={pinned}
          entryFile={entryFile}
          reusedThrough={reusedThrough}
          scrub={scrub}
          onScrub={(next) => {
            setScrubbed(next);
            select(pinned.placeOfSeq.get(next));
            setSeq(next);
          }}
          selectedSeq={seq}
          onPick={(entry) => {
            setSeq(entry.seq);
            select(pinned.placeOfSeq.get(entry.seq));
          }}
        />
      </div>
    </DeferredValues.Provider>
  );
}

/** The name in the source map's `sources` of the script's entry file (named shorter, maybe). */
function entryName(names: readonly string[], entry: string): string | undefined {
  const base = (name: string) => name.slice(name.lastIndexOf("/") + 1);
  return (
    names.find((name) => name === entry) ??
    names.find((name) => name.endsWith(`/${entry}`) || entry.endsWith(`/${name}`)) ??
    names.find((name) => base(name) === base(entry))
  );
}

function RunHeader(props: {
  run: RunView;
  started: Extract<JournalEntry, { kind: "run.started" }> | undefined;
  reached: number | undefined;
  forks: RunView[];
}) {
  const { run, started, reached, forks } = props;
  return (
    <section class="run-header" aria-labelledby="run-title">
      <h2 id="run-title">
        <span class="mono">{run.id}</span>{" "}
        <span class={`status ${run.status}`} data-status={run.status}>
          {run.status}
        </span>
      </h2>
      <dl class="facts">
        <dt>script</dt>
        <dd>
          {run.script ?? ""} <span class="mono muted">{run.scriptHash.slice(0, 19)}</span>
        </dd>
        <dt>toolset</dt>
        <dd>{run.toolset}</dd>
        <dt>epoch</dt>
        <dd>{run.epoch}</dd>
        <dt>created</dt>
        <dd>{localTime(run.createdAt)}</dd>
        {started !== undefined && (
          <>
            <dt>started</dt>
            <dd>
              {/* The run's own clock begins here (Date.now() in the script): its run.started. */}
              {localTime(started.at)} <span class="muted">(its logical clock's start)</span>
            </dd>
          </>
        )}
        {run.endedAt !== undefined && (
          <>
            <dt>ended</dt>
            <dd>
              {localTime(run.endedAt)} (after{" "}
              {duration(Date.parse(run.endedAt) - Date.parse(run.createdAt))})
            </dd>
          </>
        )}
        {started !== undefined && reached !== undefined && (
          <>
            <dt>logical time</dt>
            <dd>
              {new Date(reached).toISOString()} (+{duration(reached - started.at)} since the start)
            </dd>
          </>
        )}
        {run.replayable === "not-strict" && run.firstRedacted !== undefined && (
          <>
            <dt>replay</dt>
            <dd class="not-strict" data-replayable="not-strict">
              not strictly replayable: entry #{run.firstRedacted.seq} was redacted by the capture
              policy ({run.firstRedacted.rules.join(", ")}); it cannot be replayed or forked past it
            </dd>
          </>
        )}
        {run.parent !== undefined && (
          <>
            <dt>forked from</dt>
            <dd>
              <a href={runHref(run.parent.runId)}>{run.parent.runId}</a>
              {/* seq 0: no `at` was given; the fork went live at the first difference. */}
              {run.parent.seq > 0
                ? `, live from #${run.parent.seq} at the latest`
                : ", live from the first difference"}
            </dd>
          </>
        )}
        {forks.length > 0 && (
          <>
            <dt>forks</dt>
            <dd>
              {forks.map((fork) => (
                <a key={fork.id} class="fork" href={runHref(fork.id)}>
                  {fork.id} ({fork.status})
                </a>
              ))}
            </dd>
          </>
        )}
      </dl>
      <div class="io">
        <div>
          <h3>Input</h3>
          <ValueView
            value={started?.input}
            label="the input"
            where={`${started?.seq ?? 1}.input`}
          />
        </div>
        {run.result !== undefined && (
          <div>
            <h3>Result</h3>
            <ValueView value={run.result} label="the result" where="run.result" />
          </div>
        )}
        {run.error !== undefined && (
          <div>
            <h3>Error</h3>
            {/* The stack (source-mapped by the worker) opens with the message: shown once. */}
            <pre tabIndex={0} class="value error">
              {run.error.stack ?? `${run.error.name}: ${run.error.message}`}
              {run.error.code ? `\n(${run.error.code})` : ""}
            </pre>
          </div>
        )}
      </div>
    </section>
  );
}

/**
 * Entries per journal request: the first page is small, to be on screen at once (a run of
 * 10,000 entries takes a second or more to read whole from the embedded database), the next
 * larger, read while the operator looks at the first.
 */
const FIRST_PAGE = 200;
const JOURNAL_PAGE = 2_000;

/**
 * The run's journal, read page by page (each shown as it comes), then followed (entries after
 * the last seen) until it ends.
 */
function useJournal(api: RunSource, id: string, refused: (m: string) => void) {
  const seen = useRef<JournalEntry[]>([]);
  const [entries, setEntries] = useState<JournalEntry[]>([]);
  const [deferred, setDeferred] = useState<Record<string, DeferredValue>>({});
  useEffect(() => {
    seen.current = [];
    setEntries([]);
    setDeferred({});
  }, [id]);
  const polled = usePoll(
    async () => {
      for (;;) {
        const after = seen.current[seen.current.length - 1]?.seq ?? 0;
        const limit = after === 0 ? FIRST_PAGE : JOURNAL_PAGE;
        const page = await api.journal(id, after, limit);
        if (page.entries.length > 0) {
          seen.current = [...seen.current, ...page.entries.filter((e) => e.seq > after)];
          setEntries(seen.current);
        }
        const more = page.deferred;
        if (more !== undefined && Object.keys(more).length > 0)
          setDeferred((known) => ({ ...known, ...more }));
        if (page.entries.length < limit) return page.status;
      }
    },
    [id],
    refused,
    { stopWhen: (status) => ENDED.has(status) },
  );
  return { entries, deferred, error: polled.error };
}
