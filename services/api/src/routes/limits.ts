import { effectiveLimits } from "@rewind/core";
import type { NamespaceLimits } from "@rewind/store";
import type { z } from "zod";
import type { ApiContext } from "../context.js";
import { forgetLimits } from "../limits.js";
import { LimitsView, SetLimitsBody } from "@rewind/contract";
import { defineRoute } from "../route.js";

function view(ctx: ApiContext, namespace: string, own: NamespaceLimits) {
  return {
    namespace,
    limits: effectiveLimits(ctx.limits, own),
    own,
    defaults: ctx.limits,
  } satisfies z.input<typeof LimitsView>;
}

export const getLimitsRoute = defineRoute({
  method: "GET",
  path: "/v1/limits",
  operationId: "getLimits",
  summary: "The namespace's limits: those in force, its own settings, and the defaults",
  access: "read",
  responses: { 200: { description: "The limits", schema: LimitsView } },
  errors: [401, 503],
  async handle({ namespace }, ctx) {
    return view(ctx, namespace, await ctx.store.getLimits(namespace));
  },
});

export const setLimitsRoute = defineRoute({
  method: "POST",
  path: "/v1/limits",
  operationId: "setLimits",
  summary: "Set some of the namespace's limits (null: back to the default); the others are kept",
  description:
    "Starts see a new limit within 5 s on every API process; a run already running sees it when it is next loaded.",
  access: "operate",
  body: SetLimitsBody,
  responses: { 200: { description: "The limits, after the change", schema: LimitsView } },
  errors: [401, 413, 422, 503],
  async handle({ body, namespace }, ctx) {
    const own = await ctx.store.setLimits(
      namespace,
      body,
    );
    forgetLimits(ctx, namespace);
    ctx.onLimitsChanged?.(namespace);
    return view(ctx, namespace, own);
  },
});
