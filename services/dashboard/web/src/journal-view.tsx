import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { JournalEntry } from "./api.js";
import { duration, isoTime } from "./format.js";
import {
  entryTitle,
  inFlightAfter,
  placeAfter,
  placeText,
  type PinnedJournal,
} from "./journal-model.js";
import { Brief, useOmitted, ValueView } from "./value-view.js";

/**
 * How many times the tool was tried for a call's outcome (its retries; the journal notes more
 * than one), or undefined for what is no call's outcome.
 */
function attemptsOf(entry: JournalEntry | undefined): number | undefined {
  if (entry?.kind !== "call.result" && entry?.kind !== "call.error") return undefined;
  return entry.attempts ?? 1;
}

/** One entry whole: what it did, where, when, and what answered it. */
export function EntryDetail({ entry, pinned }: { entry: JournalEntry; pinned: PinnedJournal }) {
  const answer = pinned.answerOf.get(entry.seq);
  const took = answer === undefined ? undefined : answer.at - entry.at;
  const textLeftOut = useOmitted(`${entry.seq}.text`);
  return (
    <article class="entry" data-seq={entry.seq} aria-label={`entry ${entry.seq}`}>
      <h4>
        #{entry.seq} {entryTitle(entry)}
      </h4>
      <dl class="facts">
        <dt>logical time</dt>
        <dd>{isoTime(entry.at)}</dd>
        {entry.callsite !== undefined && (
          <>
            <dt>callsite</dt>
            <dd class="mono">{entry.callsite}</dd>
          </>
        )}
        {entry.kind === "call" && (
          <>
            <dt>callId</dt>
            <dd class="mono">{entry.callId}</dd>
          </>
        )}
        {took !== undefined && (
          <>
            <dt>{entry.kind === "timer.set" ? "fired after" : "answered after"}</dt>
            <dd>{duration(took)} (logical)</dd>
          </>
        )}
        {attemptsOf(entry.kind === "call" ? answer : entry) !== undefined && (
          <>
            <dt>attempts</dt>
            <dd>{attemptsOf(entry.kind === "call" ? answer : entry)}</dd>
          </>
        )}
        {entry.kind === "timer.set" && (
          <>
            <dt>due</dt>
            <dd>{isoTime(entry.due)}</dd>
          </>
        )}
      </dl>
      {entry.kind === "call" && (
        <ValueView value={entry.args} label="the arguments" where={`${entry.seq}.args`} />
      )}
      {entry.kind === "signal" && (
        <ValueView value={entry.payload} label="the payload" where={`${entry.seq}.payload`} />
      )}
      {entry.kind === "output" &&
        (textLeftOut === undefined ? (
          <pre tabIndex={0} class="value">
            {entry.text}
          </pre>
        ) : (
          <ValueView value={entry.text} label="the output" where={`${entry.seq}.text`} />
        ))}
      {entry.kind === "run.completed" && (
        <ValueView value={entry.result} label="the result" where={`${entry.seq}.result`} />
      )}
      {entry.kind === "run.failed" && (
        <pre tabIndex={0} class="value error">
          {entry.error.message}
        </pre>
      )}
      {entry.kind === "call.result" && (
        <ValueView value={entry.result} label="the result" where={`${entry.seq}.result`} />
      )}
      {entry.kind === "call.error" && (
        <pre tabIndex={0} class="value error">
          {entry.error.name}: {entry.error.message}
        </pre>
      )}
      {answer?.kind === "call.result" && (
        <>
          <h5>result (#{answer.seq})</h5>
          <ValueView value={answer.result} label="the result" where={`${answer.seq}.result`} />
        </>
      )}
      {answer?.kind === "call.error" && (
        <>
          <h5>error (#{answer.seq})</h5>
          <pre tabIndex={0} class="value error">
            {answer.error.name}: {answer.error.message}
          </pre>
        </>
      )}
    </article>
  );
}

interface TimelineProps {
  entries: readonly JournalEntry[];
  pinned: PinnedJournal;
  /** The script's entry file: its lines are named by number alone. */
  entryFile: string;
  /** A fork's entries #2 to this seq were reused from its parent (1: none). */
  reusedThrough?: number;
  scrub: number;
  onScrub: (seq: number) => void;
  selectedSeq: number | undefined;
  onPick: (entry: JournalEntry) => void;
}

/** Each row's height in pixels (style.css gives `ol.entries .row` the same). */
export const ROW_PX = 30;
/** Rows rendered above and below those in view, so a fast scroll shows no gap. */
const OVERSCAN = 20;
/** Rows rendered before the list has measured itself (28rem at 16 px, and the overscan). */
const FIRST_WINDOW = 15 + 2 * OVERSCAN;

/**
 * The journal in logical time, one row an entry (calls with how long they took, timers from set
 * to fired), and a scrubber over seq: after each entry, the line the run stood at and what was in
 * flight. Picking a row shows its line in the script.
 *
 * Only the rows in view are in the document (a run may have 100,000 entries): the list is a
 * scroller of fixed-height rows, with a spacer above and below as tall as the rows left out, so
 * its scrollbar is the whole journal's. (Not padding: a scroller's padding counts in its
 * client height, and the list would think all its rows in view.)
 */
export function JournalTimeline(props: TimelineProps) {
  const { entries, pinned, entryFile, scrub, onScrub, selectedSeq, onPick } = props;
  const reusedThrough = props.reusedThrough ?? 1;
  const start = entries[0]?.at ?? 0;
  const last = entries[entries.length - 1]?.seq ?? 1;
  const flying = useMemo(() => inFlightAfter(entries, scrub), [entries, scrub]);
  const place = useMemo(() => placeAfter(pinned, entries, scrub), [pinned, entries, scrub]);
  const list = useRef<HTMLOListElement>(null);
  const [view, setView] = useState({ top: 0, height: 0 });
  const first = Math.max(0, Math.floor(view.top / ROW_PX) - OVERSCAN);
  const count = view.height === 0 ? FIRST_WINDOW : Math.ceil(view.height / ROW_PX) + 2 * OVERSCAN;
  const end = Math.min(entries.length, first + count);
  // A scroll renders again only when it nears the edge of the rows rendered: most frames of a
  // scroll move rows already there, and cost the page nothing but the browser's compositing.
  const shown = useRef({ first: 0, height: 0 });
  shown.current = { first, height: view.height };
  const measure = () => {
    const box = list.current;
    if (box === null) return;
    const wanted = Math.max(0, Math.floor(box.scrollTop / ROW_PX) - OVERSCAN);
    const { first: rendered, height } = shown.current;
    if (box.clientHeight === height && Math.abs(wanted - rendered) < OVERSCAN / 2) return;
    setView({ top: box.scrollTop, height: box.clientHeight });
  };
  useEffect(() => {
    measure();
    window.addEventListener("resize", measure);
    return () => window.removeEventListener("resize", measure);
  }, []);
  // A pick elsewhere (a line's entry, the scrubber) brings its row into view.
  useEffect(() => {
    const box = list.current;
    if (box === null || selectedSeq === undefined) return;
    const index = indexOfSeq(entries, selectedSeq);
    if (index < 0) return;
    const top = index * ROW_PX;
    if (top < box.scrollTop) box.scrollTop = top;
    else if (top + ROW_PX > box.scrollTop + box.clientHeight)
      box.scrollTop = top + ROW_PX - box.clientHeight;
  }, [selectedSeq, entries]);
  const rows = [];
  for (let index = first; index < end; index++) {
    const entry = entries[index]!;
    const answer = pinned.answerOf.get(entry.seq);
    const entryPlace = pinned.placeOfSeq.get(entry.seq);
    const classes = ["row", entry.kind.replace(".", "-")];
    if (entry.seq > scrub) classes.push("future");
    if (entry.seq === selectedSeq) classes.push("selected");
    const reused = entry.seq > 1 && entry.seq <= reusedThrough;
    if (reused) classes.push("reused");
    rows.push(
      <li
        key={entry.seq}
        class={classes.join(" ")}
        data-seq={entry.seq}
        aria-setsize={entries.length}
        aria-posinset={index + 1}
      >
        <button
          type="button"
          aria-pressed={entry.seq === selectedSeq}
          onClick={() => onPick(entry)}
        >
          <span class="seq">#{entry.seq}</span>
          <span class="at">+{duration(entry.at - start)}</span>
          <span class="what">{entryTitle(entry)}</span>
          {reused && <span class="badge">reused</span>}
          {entryPlace !== undefined && (
            <span class="where">{placeText(entryPlace, entryFile)}</span>
          )}
          {answer !== undefined && entry.kind !== "timer.set" && (
            <span class="took">{duration(answer.at - entry.at)}</span>
          )}
          {/* A timer from set to fired (or, not fired, when it is due). */}
          {entry.kind === "timer.set" && (
            <span class="took">
              {answer?.kind === "timer.fired"
                ? `fired after ${duration(answer.at - entry.at)}`
                : `due after ${duration(entry.due - entry.at)}`}
            </span>
          )}
          {entry.kind === "call" && <Brief value={entry.args} where={`${entry.seq}.args`} />}
          {entry.kind === "signal" && (
            <Brief value={entry.payload} where={`${entry.seq}.payload`} />
          )}
          {entry.kind === "output" && <Brief value={entry.text} where={`${entry.seq}.text`} />}
        </button>
      </li>,
    );
  }
  return (
    <section class="timeline" aria-labelledby="timeline-title">
      <h3 id="timeline-title">Journal ({entries.length.toLocaleString()} entries)</h3>
      <div class="scrubber">
        <label for="scrub">After seq</label>
        <input
          id="scrub"
          type="range"
          min={1}
          max={last}
          value={scrub}
          onInput={(event) => onScrub(Number((event.target as HTMLInputElement).value))}
        />
        <output for="scrub" id="scrub-state">
          #{scrub}: {place === undefined ? "line –" : placeText(place, entryFile)}; in flight:{" "}
          {flying.length === 0
            ? "nothing"
            : flying
                .slice(0, 10)
                .map((e) => `#${e.seq} ${entryTitle(e)}`)
                .join(", ") + (flying.length > 10 ? ` and ${flying.length - 10} more` : "")}
        </output>
      </div>
      <ol ref={list} class="entries" tabIndex={-1} aria-label="Journal entries" onScroll={measure}>
        {first > 0 && <Spacer rows={first} />}
        {rows}
        {end < entries.length && <Spacer rows={entries.length - end} />}
      </ol>
    </section>
  );
}

/** The index of the entry with this seq: seqs are 1, 2, 3 … with no gaps, so usually seq - 1. */
function indexOfSeq(entries: readonly JournalEntry[], seq: number): number {
  const guess = seq - (entries[0]?.seq ?? 1);
  return entries[guess]?.seq === seq ? guess : entries.findIndex((e) => e.seq === seq);
}

/** The height of `rows` rows left out of the document; nothing to read or focus. */
function Spacer({ rows }: { rows: number }) {
  return <li class="spacer" aria-hidden="true" style={{ height: `${rows * ROW_PX}px` }} />;
}
