import type { z } from "zod";
import { defineRoute } from "../route.js";
import { ResultQuery, RunIdParams, RunResult } from "@rewind/contract";
import { watchRun } from "../watch-run.js";
import { ended, outcomeOf } from "../run-view.js";

/**
 * The run's outcome. With `wait` (at most 60s) it answers as soon as the run ends; if the run is
 * still open at the deadline it answers 200 all the same, with `ended: false` and the current
 * status, and the client asks again. A quarantined run has not ended: it waits for an operator.
 */
export const getResult = defineRoute({
  method: "GET",
  path: "/v1/runs/:id/result",
  operationId: "getRunResult",
  summary: "Get a run's result, waiting up to `wait` for it to end",
  access: "read",
  params: RunIdParams,
  query: ResultQuery,
  responses: {
    200: {
      description: "The outcome if the run has ended (`ended: true`), else its current status",
      schema: RunResult,
    },
  },
  errors: [401, 404, 422, 503],
  async handle({ params, query, namespace, signal }, ctx) {
    const run = await watchRun(ctx, namespace, params.id, query.wait ?? 0, signal, ended, true);
    return { id: run.id, ...outcomeOf(run) } satisfies z.input<typeof RunResult>;
  },
});
