import { useEffect, useMemo, useRef } from "preact/hooks";
import type { JournalEntry } from "./api.js";
import { highlightLines } from "./highlight.js";
import type { PinnedJournal } from "./journal-model.js";

interface Props {
  /** The file shown, one of `files`. */
  file: string;
  /** Every file of the script, the entry file first. */
  files: readonly string[];
  entryFile: string;
  source: string;
  pinned: PinnedJournal;
  /** The line the operator picked (its entries are listed beside), or the scrubber's. */
  selected: number | undefined;
  /** Where the run stood after the scrubbed seq. */
  current: number | undefined;
  onSelect: (line: number) => void;
  onFile: (file: string) => void;
}

/**
 * The run's script, highlighted, each line with a gutter mark counting the journal entries it
 * caused; a mark is a button (keyboard-usable) that lists that line's entries. A script of
 * several files has a button a file, each with the count of entries pinned in it.
 */
export function SourceView(props: Props) {
  const { file, files, entryFile, source, pinned, selected, current, onSelect, onFile } = props;
  const lines = useMemo(() => highlightLines(source), [source]);
  const marks = pinned.byFile.get(file);
  const box = useRef<HTMLOListElement>(null);
  useEffect(() => {
    const line = selected ?? current;
    if (line === undefined) return;
    box.current?.querySelector(`[data-line="${line}"]`)?.scrollIntoView({ block: "nearest" });
  }, [selected, current]);
  return (
    <figure class="source">
      <figcaption>
        {file} <span class="muted">as this run ran it</span>
        {files.length > 1 && (
          <div class="files" role="group" aria-label="The script's files">
            {files.map((name) => (
              <button
                key={name}
                type="button"
                data-file={name}
                aria-pressed={name === file}
                onClick={() => onFile(name)}
              >
                {name}
                {name === entryFile ? " (entry)" : ""}{" "}
                <span class="count">{entriesIn(pinned.byFile.get(name))}</span>
              </button>
            ))}
          </div>
        )}
      </figcaption>
      <ol ref={box} class="code" aria-label={`${file}, with the journal's entries by line`}>
        {lines.map((html, index) => {
          const line = index + 1;
          const entries = marks?.get(line);
          const classes = ["line"];
          if (line === selected) classes.push("selected");
          if (line === current) classes.push("current");
          return (
            <li key={line} class={classes.join(" ")} data-line={line}>
              <span class="gutter">
                {entries !== undefined && (
                  <button
                    type="button"
                    class="mark"
                    data-count={entries.length}
                    aria-pressed={line === selected}
                    aria-label={`line ${line}: ${describe(entries)}`}
                    onClick={() => onSelect(line)}
                  >
                    {countShown(entries.length)}
                  </button>
                )}
              </span>
              <span class="number" aria-hidden="true">
                {line}
              </span>
              {/* highlight.js escaped the text: the HTML holds only its own spans. */}
              <code class="text" dangerouslySetInnerHTML={{ __html: html || " " }} />
            </li>
          );
        })}
      </ol>
    </figure>
  );
}

/** "3 entries": how many entries a file's lines hold. */
function entriesIn(lines: Map<number, JournalEntry[]> | undefined): string {
  let count = 0;
  for (const entries of lines?.values() ?? []) count += entries.length;
  return `${count.toLocaleString()} ${count === 1 ? "entry" : "entries"}`;
}

function describe(entries: JournalEntry[]): string {
  return `${entries.length} journal ${entries.length === 1 ? "entry" : "entries"} (${[
    ...new Set(entries.map((e) => e.kind)),
  ].join(", ")})`;
}

/** A count that fits the gutter: 999 as it is, 9,000 as "9k" (the label says it whole). */
function countShown(count: number): string {
  return count < 1_000 ? String(count) : `${Math.floor(count / 1_000)}k`;
}
