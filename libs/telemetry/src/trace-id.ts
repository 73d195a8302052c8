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
