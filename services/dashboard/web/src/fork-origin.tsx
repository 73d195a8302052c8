import { useEffect, useMemo, useState } from "preact/hooks";
import type { Api, JournalEntry, RunView } from "./api.js";
import { entryTitle } from "./journal-model.js";
import { runHref } from "./route.js";

/**
 * A fork's entries reused from its parent: the run's journal is compared with the parent's,
 * entry by entry from #2 (a reused entry is adopted as it is: same kind, time, callId, values);
 * the first that differs is where the fork went live.
 */
export function ForkOrigin(props: {
  api: Api;
  run: RunView;
  journal: readonly JournalEntry[];
  /** Told the seq of the last entry reused from the parent (1: none), to mark them elsewhere. */
  onReused?: (lastSeq: number) => void;
}) {
  const { api, run, journal, onReused } = props;
  const parentId = run.parent!.runId;
  const [parent, setParent] = useState<JournalEntry[]>();
  const [problem, setProblem] = useState<string>();
  useEffect(() => {
    api.journal(parentId).then(
      (page) => setParent(page.entries),
      (error: Error) => setProblem(error.message),
    );
  }, [parentId]);
  const reused = useMemo(() => {
    const same: JournalEntry[] = [];
    for (const entry of parent === undefined ? [] : journal.slice(1)) {
      const theirs = parent!.find((p) => p.seq === entry.seq);
      if (theirs === undefined || JSON.stringify(theirs) !== JSON.stringify(entry)) break;
      same.push(entry);
    }
    return same;
  }, [parent, journal]);
  const lastReused = reused[reused.length - 1]?.seq ?? 1;
  useEffect(() => {
    if (parent !== undefined) onReused?.(lastReused);
  }, [parent, lastReused]);
  if (problem !== undefined) return <p class="problem">{problem}</p>;
  if (parent === undefined || journal.length === 0) return null;
  const live = journal[reused.length + 1];
  return (
    <section class="fork-origin" aria-labelledby="fork-origin-title">
      <h3 id="fork-origin-title">
        Forked from <a href={runHref(parentId)}>{parentId}</a>: {reused.length} reused{" "}
        {reused.length === 1 ? "entry" : "entries"}
      </h3>
      <ol class="reused-entries">
        {reused.map((entry) => (
          <li key={entry.seq} class="reused" data-seq={entry.seq}>
            <span class="badge">reused</span> #{entry.seq} {entryTitle(entry)}
          </li>
        ))}
        {live !== undefined && (
          <li class="live" data-seq={live.seq}>
            <span class="badge live">live</span> #{live.seq} {entryTitle(live)} and after
          </li>
        )}
      </ol>
    </section>
  );
}
