import type { z } from "zod";
import { TokenSelf } from "@rewind/contract";
import { RewindError } from "@rewind/core";
import { defineRoute } from "../route.js";

/**
 * The token the request carries: its namespace, label and scopes, so a client (the dashboard)
 * can offer only what the token may do, and say why the rest is disabled.
 */
export const getOwnToken = defineRoute({
  method: "GET",
  path: "/v1/token",
  operationId: "getOwnToken",
  summary: "The API token of this request: namespace, label and scopes",
  access: "read",
  responses: { 200: { description: "The token", schema: TokenSelf } },
  errors: [401, 403, 503],
  async handle({ grant }) {
    if (grant === undefined) throw new RewindError("UNAUTHORIZED", "The request has no API token");
    return {
      id: grant.id,
      namespace: grant.namespace,
      label: grant.label,
      scopes: [...grant.scopes],
    } satisfies z.input<typeof TokenSelf>;
  },
});
