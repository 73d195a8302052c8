import type { JournalEntry } from "@rewind/core";
import type { ProjectedRun, Store } from "@rewind/store";
import type { RunView } from "./span-model.js";
import { traceIdOfRun } from "./span-model.js";

/** Runs' views kept between windows, at most this many (the least recently used go first). */
const MAX_VIEWS = 5_000;
/** How long a namespace's codec setting is trusted before it is read again. */
const CODEC_TTL_MS = 1_000;

/**
 * The runs' views a projector makes its deliveries from, kept between windows. A journal only
 * grows, so a run seen before costs only its new rows, and a window's runs are read together in
 * one statement: under W1 a window of 200 transactions touches about as many runs, each again at
 * every call it commits, and reading each one's whole journal by itself (five queries a run) took
 * Postgres three times W1's own CPU per call and left the projector tens of seconds behind. A
 * view may hold entries committed after the window: spans depend only on entries at or before
 * the one that ends them.
 */
export class RunViews {
  private readonly views = new Map<string, RunView>();
  private readonly codecs = new Map<string, { sealed: boolean; readAt: number }>();

  constructor(
    private readonly store: Store,
    private readonly max = MAX_VIEWS,
  ) {}

  /** Each run's view holding at least its entries up to the seq given; undefined if it is gone. */
  async getAll(wanted: readonly [string, number][]): Promise<(RunView | undefined)[]> {
    const stale = wanted
      .filter(([runId, seq]) => (this.views.get(runId)?.journal.length ?? 0) < seq)
      .map(([runId]) => ({ runId, fromSeq: (this.views.get(runId)?.journal.length ?? 0) + 1 }));
    const read = stale.length > 0 ? await this.store.projectedRuns(stale) : new Map();
    for (const { runId } of stale) {
      const added = read.get(runId);
      // Read again now: another sink's loop may have loaded or grown it meanwhile.
      const cached = this.views.get(runId);
      this.views.delete(runId);
      if (added === undefined) continue; // gone
      this.views.set(runId, cached === undefined ? await this.first(added) : grow(cached, added));
    }
    const views: (RunView | undefined)[] = [];
    for (const [runId] of wanted) {
      const view = this.views.get(runId);
      if (view === undefined) {
        views.push(undefined);
        continue;
      }
      // Most recently used last: the oldest are dropped first.
      this.views.delete(runId);
      this.views.set(runId, view);
      views.push(await this.withCodec(view));
    }
    while (this.views.size > this.max) this.views.delete(this.views.keys().next().value!);
    return views;
  }

  /** A run seen for the first time: its parent's trace (a fork's) is read once. */
  private async first(read: { run: ProjectedRun; journal: JournalEntry[] }): Promise<RunView> {
    const started = read.journal[0];
    let parentTraceId: string | undefined;
    if (started?.kind === "run.started" && started.parent !== undefined) {
      const parent = await this.store.projectedRun(started.parent.runId);
      parentTraceId = traceIdOfRun(started.parent.runId, parent?.traceparent ?? null);
    }
    return {
      journal: read.journal,
      projected: upTo(read.run, read.journal.length),
      ...(parentTraceId !== undefined ? { parentTraceId } : {}),
    };
  }

  /** Whether the run's namespace seals its values, read again at most once a second. */
  private async withCodec(view: RunView): Promise<RunView> {
    const started = view.journal[0];
    if (started?.kind !== "run.started") return view;
    let codec = this.codecs.get(started.namespace);
    if (codec === undefined || Date.now() - codec.readAt > CODEC_TTL_MS) {
      codec = {
        sealed: (await this.store.getCodec(started.namespace)).enabled,
        readAt: Date.now(),
      };
      this.codecs.set(started.namespace, codec);
    }
    const { sealed: _, ...rest } = view;
    return codec.sealed ? { ...rest, sealed: true } : rest;
  }
}

/**
 * A cached view with the rows committed since it was read. Each sink's loop reads on its own, so
 * another may have grown the view while this read was under way: only what is beyond it is added.
 */
function grow(view: RunView, added: { run: ProjectedRun; journal: JournalEntry[] }): RunView {
  const known = view.journal.length;
  const journal = [...view.journal, ...added.journal.filter((entry) => entry.seq > known)];
  const fresh = upTo(added.run, journal.length);
  return {
    ...view,
    journal,
    projected: {
      ...view.projected,
      committedUs: new Map([...view.projected.committedUs, ...fresh.committedUs]),
      activations: [
        ...view.projected.activations,
        ...fresh.activations.filter((a) => a.seq > known),
      ],
    },
  };
}

/** A run's decoded journal and what the store kept beside it, or undefined if it is gone. */
export async function loadRunView(store: Store, runId: string): Promise<RunView | undefined> {
  const journal = await store.readJournal(runId);
  const projected = await store.projectedRun(runId);
  if (projected === undefined) return undefined;
  const started = journal[0];
  let parentTraceId: string | undefined;
  if (started?.kind === "run.started" && started.parent !== undefined) {
    const parent = await store.projectedRun(started.parent.runId);
    parentTraceId = traceIdOfRun(started.parent.runId, parent?.traceparent ?? null);
  }
  const sealed =
    started?.kind === "run.started" && (await store.getCodec(started.namespace)).enabled;
  return {
    journal,
    projected: upTo(projected, journal.length),
    ...(parentTraceId !== undefined ? { parentTraceId } : {}),
    ...(sealed ? { sealed } : {}),
  };
}

/**
 * What was read of the store beside the journal, cut to the journal's length: rows that
 * committed between the two reads are read with the journal next time, never twice.
 */
export function upTo(projected: ProjectedRun, length: number): ProjectedRun {
  return {
    ...projected,
    committedUs: new Map([...projected.committedUs].filter(([seq]) => seq <= length)),
    activations: projected.activations.filter((a) => a.seq <= length),
  };
}
