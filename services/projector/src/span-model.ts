import { createHash } from "node:crypto";
import type { Json, JournalEntry, RunStartedEntry } from "@rewind/core";
import type { CommittedActivation, ProjectedRun } from "@rewind/store";
import { derivedTraceId, parseTraceparent } from "@rewind/telemetry";

/**
 * The span model of a run's trace (docs/traces.md), a pure function of its committed journal:
 * ids come from the run id and seqs, times from the commit times stored with the entries, so a
 * re-send or a backfill produces the same spans byte for byte, and a replay (which commits
 * nothing) produces none.
 *
 * A span is made by the entry that ends it: the `run.started` span by run.started (so the run is
 * visible while open), a tool call's by its outcome, a timer's by timer.fired or timer.cancel, an
 * activation's by its first commit, the run's own by its end, a quarantine's by run.quarantined.
 */

export type SpanStatus = "unset" | "error";

export interface SpanAttributes {
  [key: string]: string | number | boolean;
}

export interface ModelSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** Microseconds since the epoch. */
  startUs: number;
  endUs: number;
  status: SpanStatus;
  statusMessage?: string;
  attributes: SpanAttributes;
  events: { name: string; timeUs: number; attributes: SpanAttributes }[];
  links: { traceId: string; spanId: string; attributes: SpanAttributes }[];
}

/** A run as the model reads it: its decoded journal and what the store kept beside it. */
export interface RunView {
  journal: readonly JournalEntry[];
  projected: ProjectedRun;
  /** The trace id of the run's parent (a fork's), when it has one. */
  parentTraceId?: string;
  /**
   * The run's namespace seals its values at rest (docs/codec.md): no value goes into a span,
   * which would carry it in the clear to the tracing backend.
   */
  sealed?: boolean;
}

const ZERO_SPAN = "0".repeat(16);

/** The run's trace: its starting request's when it carried one, else derived from the run id. */
export function traceIdOfRun(runId: string, traceparent: string | null): string {
  return parseTraceparent(traceparent)?.traceId ?? derivedTraceId(runId);
}

/** A span id from the run, the span's role and the seq it starts at (never all zeros). */
export function spanIdOf(runId: string, role: string, seq: number): string {
  const id = createHash("sha256").update(`rewind.span:${runId}:${role}:${seq}`).digest("hex");
  return id.slice(0, 16) === ZERO_SPAN ? id.slice(16, 32) : id.slice(0, 16);
}

/** `code.*` attributes (OpenTelemetry semantic conventions) from a `file:line:column` callsite. */
export function codeAttributes(callsite: string | undefined): SpanAttributes {
  if (callsite === undefined || callsite === "") return {};
  const match = /^(.*):(\d+):(\d+)$/.exec(callsite);
  if (match === null) return { "code.file.path": callsite };
  return {
    "code.file.path": match[1]!,
    "code.line.number": Number(match[2]),
    "code.column.number": Number(match[3]),
  };
}

/**
 * The script line nearest `seq`: its entry's callsite, else the last earlier entry's (where the
 * script was waiting), else the first of the same commit's (same transaction, same commit time).
 * Nothing later than that commit: the answer must be the same at the first send and a backfill.
 */
export function callsiteNear(view: RunView, seq: number): string | undefined {
  const { journal, projected } = view;
  for (let i = seq - 1; i >= 0; i--) if (journal[i]?.callsite) return journal[i]!.callsite;
  const committed = projected.committedUs.get(seq);
  for (let i = seq; i < journal.length; i++) {
    if (projected.committedUs.get(i + 1) !== committed) break;
    if (journal[i]?.callsite) return journal[i]!.callsite;
  }
  return undefined;
}

const END_KINDS = new Set(["run.completed", "run.failed", "run.cancelled"]);
const TEXT_LIMIT = 1024;

function short(value: Json | undefined): string {
  const text = JSON.stringify(value ?? null);
  return text.length > TEXT_LIMIT ? `${text.slice(0, TEXT_LIMIT)}…` : text;
}

/**
 * The spans that the entries `seqs` and the activations `activations` of a run end, in seq order.
 * Entries whose span needs an earlier entry (a call's outcome its call) read it from the view.
 */
export function spansOf(
  view: RunView,
  seqs: readonly number[],
  activations: readonly CommittedActivation[],
): ModelSpan[] {
  const { journal, projected } = view;
  const started = journal[0];
  if (started?.kind !== "run.started") return [];
  const runId = started.runId;
  const traceId = traceIdOfRun(runId, projected.traceparent);
  const runSpanId = spanIdOf(runId, "run", 0);
  const time = (seq: number) => projected.committedUs.get(seq) ?? 0;
  const child = (
    role: string,
    seq: number,
    name: string,
    startUs: number,
    endUs: number,
    attributes: SpanAttributes,
  ): ModelSpan => ({
    traceId,
    spanId: spanIdOf(runId, role, seq),
    parentSpanId: runSpanId,
    name,
    startUs,
    endUs: Math.max(startUs, endUs),
    status: "unset",
    attributes: { "rewind.run.id": runId, "rewind.seq": seq, ...attributes },
    events: [],
    links: [],
  });
  const spans: { order: number; span: ModelSpan }[] = [];
  for (const seq of seqs) {
    const entry = journal[seq - 1];
    if (entry === undefined || entry.seq !== seq) continue;
    switch (entry.kind) {
      case "run.started": {
        const span = child("started", 1, "run.started", time(1), time(1), runAttributes(started));
        span.links = forkLinks(view, started);
        spans.push({ order: seq, span });
        break;
      }
      case "call.result":
      case "call.error": {
        const call = journal[entry.callSeq - 1];
        if (call?.kind !== "call") break;
        // Each cold load while the call was in flight ran it again (same callId).
        const attempts =
          1 +
          projected.activations.filter(
            (a) => a.kind === "cold" && a.seq > call.seq && a.seq <= entry.seq,
          ).length;
        const span = child(
          "call",
          call.seq,
          `execute_tool ${call.name}`,
          time(call.seq),
          time(seq),
          {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.callId,
            "rewind.call.attempts": attempts,
            "rewind.call.outcome_seq": seq,
            ...codeAttributes(call.callsite),
          },
        );
        if (entry.kind === "call.error") {
          span.status = "error";
          span.statusMessage = entry.error.message;
          span.attributes["error.type"] = entry.error.code ?? entry.error.name;
        }
        spans.push({ order: seq, span });
        break;
      }
      case "timer.fired":
      case "timer.cancel": {
        const set = journal[entry.timerSeq - 1];
        if (set?.kind !== "timer.set") break;
        const span = child("timer", set.seq, "timer", time(set.seq), time(seq), {
          "rewind.timer.due": new Date(set.due).toISOString(),
          "rewind.timer.outcome": entry.kind === "timer.fired" ? "fired" : "cancelled",
          ...codeAttributes(set.callsite),
        });
        spans.push({ order: seq, span });
        break;
      }
      case "run.quarantined": {
        const report = entry.report as {
          message?: string;
          reason?: string;
          recorded?: { callsite?: string; label?: string };
          replayed?: { callsite?: string; label?: string };
        };
        const span = child("quarantine", seq, "run.quarantined", time(seq), time(seq), {
          "rewind.quarantine.reason": report.reason ?? "unknown",
          "rewind.divergence.recorded.callsite": report.recorded?.callsite ?? "",
          "rewind.divergence.replayed.callsite": report.replayed?.callsite ?? "",
          ...codeAttributes(
            report.replayed?.callsite ?? report.recorded?.callsite ?? callsiteNear(view, seq),
          ),
        });
        span.status = "error";
        span.statusMessage = report.message ?? "quarantined";
        spans.push({ order: seq, span });
        break;
      }
      default:
        if (END_KINDS.has(entry.kind))
          spans.push({ order: seq, span: runSpan(view, started, entry) });
        break;
    }
  }
  for (const activation of activations) {
    const span = child(
      "activation",
      activation.seq,
      `activation ${activation.kind}`,
      Math.min(activation.startedUs, activation.committedUs),
      activation.committedUs,
      {
        "rewind.activation.kind": activation.kind,
        "rewind.activation.replayed": activation.replayed,
        "rewind.activation.attempt": activation.attempt,
        ...(activation.scheduleToStartMs !== null
          ? { "rewind.activation.schedule_to_start_ms": activation.scheduleToStartMs }
          : {}),
        ...codeAttributes(callsiteNear(view, activation.seq)),
      },
    );
    spans.push({ order: activation.seq, span });
  }
  return spans.sort((a, b) => a.order - b.order).map((s) => s.span);
}

function runAttributes(started: RunStartedEntry): SpanAttributes {
  return {
    "rewind.namespace": started.namespace,
    "rewind.toolset": started.toolset,
    "rewind.epoch": started.epoch,
    "rewind.script.hash": started.scriptHash,
  };
}

/** A fork points at its parent's run span, at the seq it was forked from. */
function forkLinks(view: RunView, started: RunStartedEntry): ModelSpan["links"] {
  if (started.parent === undefined) return [];
  return [
    {
      traceId: view.parentTraceId ?? derivedTraceId(started.parent.runId),
      spanId: spanIdOf(started.parent.runId, "run", 0),
      attributes: {
        "rewind.fork.parent_run_id": started.parent.runId,
        "rewind.fork.seq": started.parent.seq,
      },
    },
  ];
}

/** The run's span, from run.started to its end, with its signals and outputs as events. */
function runSpan(view: RunView, started: RunStartedEntry, end: JournalEntry): ModelSpan {
  const { journal, projected } = view;
  const runId = started.runId;
  const time = (seq: number) => projected.committedUs.get(seq) ?? 0;
  const events: ModelSpan["events"] = [];
  for (const entry of journal) {
    if (entry.seq > end.seq) break;
    if (entry.kind === "signal")
      events.push({
        name: "rewind.signal",
        timeUs: time(entry.seq),
        attributes: { "rewind.seq": entry.seq, "rewind.signal.name": entry.name },
      });
    else if (entry.kind === "output")
      events.push({
        name: "rewind.output",
        timeUs: time(entry.seq),
        attributes: {
          "rewind.seq": entry.seq,
          "rewind.output.stream": entry.stream,
          "rewind.output.text":
            view.sealed === true
              ? "(sealed)"
              : entry.text.length > TEXT_LIMIT
                ? `${entry.text.slice(0, TEXT_LIMIT)}…`
                : entry.text,
          ...codeAttributes(entry.callsite),
        },
      });
    else if (entry.kind === "run.released")
      events.push({
        name: "rewind.released",
        timeUs: time(entry.seq),
        attributes: { "rewind.seq": entry.seq, "rewind.released.by": entry.by },
      });
  }
  const remote = parseTraceparent(projected.traceparent);
  const status = end.kind.slice("run.".length);
  const span: ModelSpan = {
    traceId: traceIdOfRun(runId, projected.traceparent),
    spanId: spanIdOf(runId, "run", 0),
    ...(remote !== undefined ? { parentSpanId: remote.spanId } : {}),
    name: "run",
    startUs: time(1),
    endUs: Math.max(time(1), time(end.seq)),
    status: end.kind === "run.failed" ? "error" : "unset",
    attributes: {
      "rewind.run.id": runId,
      "rewind.run.status": status,
      "rewind.run.entries": end.seq,
      ...runAttributes(started),
      ...codeAttributes(callsiteNear(view, end.seq)),
    },
    events,
    links: forkLinks(view, started),
  };
  if (end.kind === "run.failed") {
    span.statusMessage = end.error.message;
    span.attributes["error.type"] = end.error.code ?? end.error.name;
  }
  if (end.kind === "run.completed")
    span.attributes["rewind.run.result"] = view.sealed === true ? "(sealed)" : short(end.result);
  return span;
}
