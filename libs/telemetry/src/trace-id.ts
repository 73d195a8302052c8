import { createHash } from "node:crypto";

/**
 * The trace id of a run, derived from its id alone (32 hex digits, W3C trace-context form), so
 * every process, a replay and a later backfill name the same trace without storing anything.
 * Cached: a hot run's observations ask for it again and again.
 */
const cache = new Map<string, string>();

export function traceIdOf(runId: string): string {
  let id = cache.get(runId);
  if (id === undefined) {
    id = createHash("sha256").update(`rewind.trace:${runId}`).digest("hex").slice(0, 32);
    if (cache.size >= 10_000) cache.delete(cache.keys().next().value!);
    cache.set(runId, id);
  }
  return id;
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
