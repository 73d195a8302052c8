import { RewindError } from "@rewind/core";
import { databaseUnavailable } from "@rewind/store";
import type { z } from "zod";
import { defineRoute } from "../route.js";
import { Health, Root } from "@rewind/contract";

const READY_TIMEOUT_MS = 2_000;

export const root = defineRoute({
  method: "GET",
  path: "/",
  operationId: "root",
  summary: "Where the API, its OpenAPI document and the dashboard are",
  description:
    "A browser (a request whose Accept header prefers text/html) is redirected to the dashboard when the API serves it; every other client gets these pointers as JSON.",
  access: "public",
  responses: {
    200: { description: "Pointers to the API", schema: Root },
    302: {
      description: "A browser is sent to the dashboard",
      headers: { Location: "The dashboard, /dashboard/" },
    },
  },
  errors: [],
  async handle({ request, reply }, ctx) {
    // The answer depends on Accept: caches must keep the two apart.
    void reply.header("vary", "Accept");
    if (ctx.dashboard !== undefined && prefersHtml(request.headers.accept))
      return reply.redirect(ctx.dashboard, 302);
    return {
      name: "rewind",
      version: ctx.version,
      api: "/v1",
      openapi: "/v1/openapi.json",
      ...(ctx.dashboard !== undefined ? { dashboard: ctx.dashboard } : {}),
    } satisfies z.input<typeof Root>;
  },
});

/**
 * Whether an Accept header names text/html, at least as wanted as JSON. Browsers list text/html
 * first (and a catch-all at a lower q); API clients send application/json, a bare catch-all, or
 * no Accept at all, and keep getting JSON.
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const weights = new Map<string, number>();
  for (const part of accept.toLowerCase().split(",")) {
    const [type = "", ...params] = part.split(";").map((s) => s.trim());
    const q = params.find((p) => p.startsWith("q="));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    weights.set(type, Number.isFinite(weight) ? weight : 0);
  }
  const html = weights.get("text/html") ?? 0;
  return html > 0 && html >= (weights.get("application/json") ?? 0);
}

export const healthz = defineRoute({
  method: "GET",
  path: "/healthz",
  operationId: "healthz",
  summary: "Liveness: the process answers",
  access: "public",
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
  access: "public",
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
