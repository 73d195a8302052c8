import { toJournalFile } from "@rewind/journal";
import { ENDED_STATUSES, INLINE_VALUE_LIMIT } from "@rewind/store";
import type { z } from "zod";
import { streamJournal, streamStart, wantsEventStream } from "../journal-stream.js";
import { defineRoute } from "../route.js";
import { findRun } from "../run-view.js";
import { JournalPage, JournalQuery, RunIdParams } from "@rewind/contract";
import { watchRun } from "../watch-run.js";

/**
 * The run's journal, or the part of it after a seq. With `wait`, it answers as soon as there is
 * something after `after` (or the run has ended): a client follows a run's output live by asking
 * again with the last seq it saw. Output is read from the journal, so what a client sees is what
 * is durable: there is no side channel.
 *
 * With `Accept: text/event-stream` it streams instead: each entry as it commits, resumable with
 * `Last-Event-ID` (see journal-stream.ts).
 */
export const readJournal = defineRoute({
  method: "GET",
  path: "/v1/runs/:id/journal",
  operationId: "readJournal",
  summary: "Read a run's journal (or follow it with after and wait, or as an event stream)",
  description:
    "With `Accept: text/event-stream` the journal is streamed as Server-Sent Events as it commits: each entry is an event whose `id` is its seq and whose `data` is the entry as JSON; `event: status` says the run's status whenever it changes (`waiting`: on a timer, a signal or a tool); `event: end` (data `{ status }`) comes once the run has ended and every entry is sent, and the response ends. A client that reconnects with `Last-Event-ID: SEQ` gets the entries after SEQ, no gap and no duplicate (without it, those after `after`). `event: error` (data `{ code, message }`) ends a stream the server could not go on with: reconnect with the last id. `format` and `wait` do not apply to a stream.",
  access: "read",
  params: RunIdParams,
  query: JournalQuery,
  responses: {
    200: {
      description: "The entries after `after`, in seq order",
      schema: JournalPage,
      alternatives: {
        "application/x-ndjson": {
          schema: JournalPage.shape.entries.element.meta({
            description: "With format=jsonl: the journal file, one entry a line",
          }),
        },
        "text/event-stream": {
          schema: JournalPage.shape.entries.element.meta({
            description:
              "With Accept: text/event-stream: Server-Sent Events, each entry's data one journal entry (id: its seq), then event: end",
          }),
        },
      },
    },
  },
  errors: [401, 404, 422, 503],
  async handle({ params, query, namespace, request, reply, signal }, ctx) {
    if (wantsEventStream(request)) {
      await findRun(ctx.store, namespace, params.id); // a 404 before the stream opens
      await streamJournal(ctx, params.id, streamStart(request, query.after), request, reply, signal);
      return reply;
    }
    const run = await watchRun(
      ctx,
      namespace,
      params.id,
      query.wait ?? 0,
      signal,
      (r) => r.lastSeq > query.after || ENDED_STATUSES.has(r.status),
    );
    const status: z.input<typeof JournalPage>["status"] = run.status;
    // A journal file holds its values inline, always: only the JSON page defers them.
    if (query.values === "deferred" && query.format === "json") {
      const page = await ctx.store.readJournalDeferred(
        run.id,
        query.after + 1,
        query.limit,
        INLINE_VALUE_LIMIT,
      );
      return { entries: page.entries, status, deferred: page.deferred };
    }
    const entries = await ctx.store.readJournal(run.id, query.after + 1, query.limit);
    if (query.format === "jsonl") {
      void reply.type("application/x-ndjson; charset=utf-8");
      return toJournalFile(entries);
    }
    return { entries, status };
  },
});
