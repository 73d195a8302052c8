import { createHash } from "node:crypto";

/**
 * The trace id a run gets when the request that started it named none: derived from its id alone
 * (32 hex digits, W3C trace-context form), so every process, a replay and a later backfill name
 * the same trace without storing anything. Cached: a hot run's observations ask for it often.
 */
const derived = new Map<string, string>();

export function derivedTraceId(runId: string): string {
  let id = derived.get(runId);
  if (id === undefined) {
    id = createHash("sha256").update(`rewind.trace:${runId}`).digest("hex").slice(0, 32);
    if (derived.size >= 10_000) derived.delete(derived.keys().next().value!);
    derived.set(runId, id);
  }
  return id;
}

/**
 * Runs in this process whose trace is the one of the request that started them (it carried a
 * traceparent, stored with the run): learned when the process loads the run, forgotten when the
 * run leaves it. Bounded all the same, so a path that forgets to forget cannot grow it forever.
 */
const started = new Map<string, string>();
const MAX_STARTED = 100_000;

/** This process holds the run now: its logs and exemplars name its start request's trace. */
export function adoptRunTrace(runId: string, traceparent: string | undefined): void {
  const traceId = parseTraceparent(traceparent)?.traceId;
  if (traceId === undefined) {
    started.delete(runId);
    return;
  }
  if (started.size >= MAX_STARTED && !started.has(runId))
    started.delete(started.keys().next().value!);
  started.set(runId, traceId);
}

export function forgetRunTrace(runId: string): void {
  started.delete(runId);
}

/**
 * The trace id of a run, as the projector exports its spans (traceIdOfRun there, from the stored
 * traceparent): its start request's when this process adopted it, else the derived one.
 */
export function traceIdOf(runId: string, traceparent?: string): string {
  return parseTraceparent(traceparent)?.traceId ?? started.get(runId) ?? derivedTraceId(runId);
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

/**
 * The trace id and parent span a W3C traceparent header names, or undefined when it is absent or
 * not valid (version 00, no all-zero id). An invalid header is ignored, as the W3C asks: the run
 * then gets the trace derived from its id.
 */
export function parseTraceparent(
  header: unknown,
): { traceId: string; spanId: string; header: string } | undefined {
  if (typeof header !== "string") return undefined;
  const match = TRACEPARENT.exec(header.trim().toLowerCase());
  if (match === null || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return undefined;
  return { traceId: match[1]!, spanId: match[2]!, header: match[0] };
}
