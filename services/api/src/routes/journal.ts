import { toJournalFile } from "@rewind/journal";
import { ENDED_STATUSES } from "@rewind/store";
import type { z } from "zod";
import { defineRoute } from "../route.js";
import { JournalPage, JournalQuery, RunIdParams } from "../schemas.js";
import { watchRun } from "../watch-run.js";

/**
 * The run's journal, or the part of it after a seq. With `wait`, it answers as soon as there is
 * something after `after` (or the run has ended): a client follows a run's output live by asking
 * again with the last seq it saw. Output is read from the journal, so what a client sees is what
 * is durable: there is no side channel.
 */
export const readJournal = defineRoute({
  method: "GET",
  path: "/v1/runs/:id/journal",
  operationId: "readJournal",
  summary: "Read a run's journal (or follow it with after and wait)",
  auth: true,
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
      },
    },
  },
  errors: [401, 404, 422, 503],
  async handle({ params, query, namespace, reply, signal }, ctx) {
    const run = await watchRun(
      ctx,
      namespace,
      params.id,
      query.wait ?? 0,
      signal,
      (r) => r.lastSeq > query.after || ENDED_STATUSES.has(r.status),
    );
    const entries = await ctx.store.readJournal(run.id, query.after + 1);
    if (query.format === "jsonl") {
      void reply.type("application/x-ndjson; charset=utf-8");
      return toJournalFile(entries);
    }
    const status: z.input<typeof JournalPage>["status"] = run.status;
    return { entries, status };
  },
});
