import type { CapturePolicy } from "@rewind/store";
import type { z } from "zod";
import { CapturePolicyQuery, CapturePolicyView, PutCapturePolicyBody } from "@rewind/contract";
import { defineRoute } from "../route.js";

function view(namespace: string, policy: CapturePolicy) {
  return {
    namespace,
    toolset: policy.toolset,
    fields: policy.fields,
    detectors: policy.detectors as z.input<typeof CapturePolicyView>["detectors"],
    patterns: policy.patterns,
    ...(policy.updatedAt !== undefined ? { updatedAt: policy.updatedAt.toISOString() } : {}),
  } satisfies z.input<typeof CapturePolicyView>;
}

export const getCapturePolicyRoute = defineRoute({
  method: "GET",
  path: "/v1/capture-policy",
  operationId: "getCapturePolicy",
  summary:
    "The namespace's capture policy (or a toolset's own): what is redacted before the journal",
  access: "read",
  query: CapturePolicyQuery,
  responses: { 200: { description: "The capture policy", schema: CapturePolicyView } },
  errors: [401, 422, 503],
  async handle({ namespace, query }, ctx) {
    return view(namespace, await ctx.store.getCapturePolicy(namespace, query.toolset ?? null));
  },
});

export const setCapturePolicyRoute = defineRoute({
  method: "PUT",
  path: "/v1/capture-policy",
  operationId: "setCapturePolicy",
  summary: "Replace the namespace's capture policy (or a toolset's own); new entries only",
  description:
    "A run is redacted by the namespace-wide policy and its toolset's own, together. Every process applies a change to the entries it commits within 5 s; entries already recorded are never rewritten. An entry redacted after the script saw it makes the run not strictly replayable (docs/capture-policy.md).",
  access: "operate",
  body: PutCapturePolicyBody,
  responses: { 200: { description: "The policy, after the change", schema: CapturePolicyView } },
  errors: [401, 413, 422, 503],
  async handle({ body, namespace }, ctx) {
    const { toolset, ...rules } = body;
    return view(namespace, await ctx.store.setCapturePolicy(namespace, toolset ?? null, rules));
  },
});
