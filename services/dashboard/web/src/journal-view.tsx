import type { JournalEntry } from "./api.js";
import { duration } from "./format.js";
import { entryTitle, inFlightAfter, lineAfter, type PinnedJournal } from "./journal-model.js";
import { Brief, ValueView } from "./value-view.js";

/** One entry whole: what it did, where, when, and what answered it. */
export function EntryDetail({ entry, pinned }: { entry: JournalEntry; pinned: PinnedJournal }) {
  const answer = pinned.answerOf.get(entry.seq);
  const took = answer === undefined ? undefined : answer.at - entry.at;
  return (
    <article class="entry" data-seq={entry.seq} aria-label={`entry ${entry.seq}`}>
      <h4>
        #{entry.seq} {entryTitle(entry)}
      </h4>
      <dl class="facts">
        <dt>logical time</dt>
        <dd>{new Date(entry.at).toISOString()}</dd>
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
        {entry.kind === "timer.set" && (
          <>
            <dt>due</dt>
            <dd>{new Date(entry.due).toISOString()}</dd>
          </>
        )}
      </dl>
      {entry.kind === "call" && <ValueView value={entry.args} label="the arguments" />}
      {entry.kind === "signal" && <ValueView value={entry.payload} label="the payload" />}
      {entry.kind === "output" && (
        <pre tabIndex={0} class="value">
          {entry.text}
        </pre>
      )}
      {entry.kind === "run.completed" && <ValueView value={entry.result} label="the result" />}
      {entry.kind === "run.failed" && (
        <pre tabIndex={0} class="value error">
          {entry.error.message}
        </pre>
      )}
      {entry.kind === "call.result" && <ValueView value={entry.result} label="the result" />}
      {entry.kind === "call.error" && (
        <pre tabIndex={0} class="value error">
          {entry.error.name}: {entry.error.message}
        </pre>
      )}
      {answer?.kind === "call.result" && (
        <>
          <h5>result (#{answer.seq})</h5>
          <ValueView value={answer.result} label="the result" />
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
  scrub: number;
  onScrub: (seq: number) => void;
  selectedSeq: number | undefined;
  onPick: (entry: JournalEntry) => void;
}

/**
 * The journal in logical time, one row an entry (calls with how long they took, timers from set
 * to fired), and a scrubber over seq: after each entry, the line the run stood at and what was in
 * flight. Picking a row shows its line in the script.
 */
export function JournalTimeline(props: TimelineProps) {
  const { entries, pinned, scrub, onScrub, selectedSeq, onPick } = props;
  const start = entries[0]?.at ?? 0;
  const last = entries[entries.length - 1]?.seq ?? 1;
  const flying = inFlightAfter(entries, scrub);
  const line = lineAfter(pinned, entries, scrub);
  return (
    <section class="timeline" aria-labelledby="timeline-title">
      <h3 id="timeline-title">Journal ({entries.length} entries)</h3>
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
          #{scrub}: line {line ?? "–"}; in flight:{" "}
          {flying.length === 0
            ? "nothing"
            : flying.map((e) => `#${e.seq} ${entryTitle(e)}`).join(", ")}
        </output>
      </div>
      <ol class="entries">
        {entries.map((entry) => {
          const answer = pinned.answerOf.get(entry.seq);
          const entryLine = pinned.lineOfSeq.get(entry.seq);
          const classes = ["row", entry.kind.replace(".", "-")];
          if (entry.seq > scrub) classes.push("future");
          if (entry.seq === selectedSeq) classes.push("selected");
          return (
            <li key={entry.seq} class={classes.join(" ")} data-seq={entry.seq}>
              <button
                type="button"
                aria-pressed={entry.seq === selectedSeq}
                onClick={() => onPick(entry)}
              >
                <span class="seq">#{entry.seq}</span>
                <span class="at">+{duration(entry.at - start)}</span>
                <span class="what">{entryTitle(entry)}</span>
                {entryLine !== undefined && <span class="where">line {entryLine}</span>}
                {answer !== undefined && entry.kind !== "timer.set" && (
                  <span class="took">{duration(answer.at - entry.at)}</span>
                )}
                {entry.kind === "call" && <Brief value={entry.args} />}
              </button>
            </li>
          );
        })}
      </ol>
    </section>
  );
}
