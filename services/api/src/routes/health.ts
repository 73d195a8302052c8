import { RewindError } from "@rewind/core";
import { databaseUnavailable } from "@rewind/store";
import type { z } from "zod";
import { defineRoute } from "../route.js";
import { Health, Root } from "../schemas.js";

const READY_TIMEOUT_MS = 2_000;

export const root = defineRoute({
  method: "GET",
  path: "/",
  operationId: "root",
  summary: "Where the API and its OpenAPI document are",
  auth: false,
  responses: { 200: { description: "Pointers to the API", schema: Root } },
  errors: [],
  async handle(_input, ctx) {
    return {
      name: "rewind",
      version: ctx.version,
      api: "/v1",
      openapi: "/v1/openapi.json",
    } satisfies z.input<typeof Root>;
  },
});

export const healthz = defineRoute({
  method: "GET",
  path: "/healthz",
  operationId: "healthz",
  summary: "Liveness: the process answers",
  auth: false,
  responses: { 200: { description: "Alive", schema: Health } },
  errors: [],
  async handle() {
    return { ok: true } satisfies z.input<typeof Health>;
  },
});

export const readyz = defineRoute({
  method: "GET",
  path: "/readyz",
  operationId: "readyz",
  summary: "Readiness: the store answers a trivial query",
  auth: false,
  responses: { 200: { description: "Ready", schema: Health } },
  errors: [503],
  async handle(_input, ctx) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer in ${READY_TIMEOUT_MS} ms`)),
        READY_TIMEOUT_MS,
      );
    });
    try {
      await Promise.race([ctx.store.listRuns({ namespace: "", limit: 1 }), timeout]);
    } catch (error) {
      // A stopped database is an expected state (one line); anything else is logged in full.
      const unavailable = databaseUnavailable(error);
      const reason = unavailable?.details.reason;
      ctx.log.error(
        "readiness check: the store does not answer",
        unavailable === undefined ? error : `the database is unavailable (${String(reason)})`,
      );
      throw new RewindError(
        "UNAVAILABLE",
        "The store (the database) does not answer: retry in a few seconds; if it lasts, check DATABASE_URL and that the database is up (details in the server's log)",
      );
    } finally {
      clearTimeout(timer);
    }
    return { ok: true } satisfies z.input<typeof Health>;
  },
});
