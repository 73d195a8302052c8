import type { FastifyReply, FastifyRequest } from "fastify";
import { ENDED_STATUSES, type RunStatus } from "@rewind/store";
import type { ApiContext } from "./context.js";
import { notFound, toHttpError } from "./errors.js";

/** How long one watch lasts before it is renewed (its Redis key's TTL is a little longer). */
const WATCH_MS = 30_000;

/** Whether the client asked for the journal as Server-Sent Events. */
export function wantsEventStream(request: FastifyRequest): boolean {
  return (request.headers.accept ?? "").includes("text/event-stream");
}

/**
 * Where a stream starts: after the `Last-Event-ID` a reconnecting client sends (each entry's event
 * id is its seq), else after `after`. A malformed id is ignored rather than refused: EventSource
 * sends back whatever it was last given.
 */
export function streamStart(request: FastifyRequest, after: number): number {
  const last = request.headers["last-event-id"];
  const text = Array.isArray(last) ? last[0] : last;
  if (text !== undefined && /^\d+$/.test(text.trim())) return Number(text.trim());
  return after;
}

/**
 * Streams a run's journal as Server-Sent Events: each entry as it commits (`id:` its seq, `data:`
 * the entry as JSON), `event: status` when the run's status changes (the client can say "waiting
 * for a signal" instead of going quiet), and `event: end` with the final status when the run has
 * ended and every entry is sent; then the response ends.
 *
 * Driven by change notices: the stream reads the store when a notice says the run changed, and
 * otherwise only on the backstop poll (sending a comment line then, which also keeps proxies from
 * closing an idle connection). Entries are read from the store, so what is streamed is durable;
 * a reconnecting client resumes after its Last-Event-ID with no gap and no duplicate.
 */
export async function streamJournal(
  ctx: ApiContext,
  /** A run of the caller's namespace (checked before the stream opens, so that is a 404). */
  runId: string,
  after: number,
  request: FastifyRequest,
  reply: FastifyReply,
  signal: AbortSignal,
): Promise<void> {
  reply.hijack();
  const out = reply.raw;
  out.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-accel-buffering": "no", // nginx: pass each event on at once
  });
  const write = (text: string) => {
    if (!out.writableEnded) out.write(text);
  };
  let sent = after;
  let status: RunStatus | undefined;
  try {
    while (!signal.aborted) {
      // Watching before reading: a commit after the read is heard. Renewed every WATCH_MS, the
      // next watch opened before the previous one closes, so none falls between.
      const watchMs = Math.max(WATCH_MS, 2 * ctx.pollMs);
      const watch = await ctx.changes.watch(runId, watchMs);
      const renewAt = Date.now() + watchMs - ctx.pollMs; // at least one poll away
      try {
        do {
          // The run's status and the entries after the last one sent, in one statement: one
          // round trip on the path from a commit to the client, and one snapshot, so a run read
          // as ended comes with every entry it has.
          const now = await ctx.store.readJournalFollowing(runId, sent + 1);
          if (now === undefined)
            throw notFound(
              `Run ${runId} is gone: it was deleted while the stream was open (its retention passed)`,
            );
          let news = false;
          for (const entry of now.entries) {
            write(`id: ${entry.seq}\ndata: ${JSON.stringify(entry)}\n\n`);
            sent = entry.seq;
            news = true;
          }
          if (now.status !== status) {
            status = now.status;
            write(`event: status\ndata: ${JSON.stringify({ status })}\n\n`);
            news = true;
          }
          if (ENDED_STATUSES.has(now.status)) {
            write(`event: end\ndata: ${JSON.stringify({ status: now.status })}\n\n`);
            return;
          }
          if (!news) write(": still there\n\n");
          await watch.next(ctx.pollMs, signal);
        } while (!signal.aborted && Date.now() < renewAt);
      } finally {
        watch.close();
      }
    }
  } catch (error) {
    // Headers are sent: the error goes in the stream, and the client reconnects from its last id.
    const { body, expected } = toHttpError(error);
    if (!expected) ctx.log.error(`${request.method} ${request.url} failed`, error);
    write(`event: error\ndata: ${JSON.stringify(body.error)}\n\n`);
  } finally {
    out.end();
  }
}
