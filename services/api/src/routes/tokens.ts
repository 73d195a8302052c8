import {
  CreateTokenBody,
  CreatedToken,
  TokenIdParams,
  TokenList,
  TokenView,
} from "@rewind/contract";
import { DEFAULT_SCOPES, RewindError } from "@rewind/core";
import { tokenIdOf } from "@rewind/store";
import type { z } from "zod";
import { defineRoute } from "../route.js";

/*
 * A namespace's own API tokens, for its operators: the tokens of other namespaces are not
 * found, and a token hands on only scopes it holds itself (an `operate` token cannot mint a
 * `metrics` one, which sees every namespace's aggregates).
 */

export const listTokens = defineRoute({
  method: "GET",
  path: "/v1/tokens",
  operationId: "listTokens",
  summary: "The namespace's API tokens, revoked ones too (never the tokens themselves)",
  access: "operate",
  responses: { 200: { description: "The tokens, oldest first", schema: TokenList } },
  errors: [401, 403, 503],
  async handle({ namespace }, ctx) {
    const tokens = await ctx.store.listTokens(namespace);
    return { tokens } satisfies z.input<typeof TokenList>;
  },
});

export const createToken = defineRoute({
  method: "POST",
  path: "/v1/tokens",
  operationId: "createToken",
  summary: "Make an API token for the namespace; the answer is the only time it is shown",
  access: "operate",
  body: CreateTokenBody,
  responses: { 201: { description: "The new token", schema: CreatedToken } },
  errors: [401, 403, 413, 422, 503],
  async handle({ body, namespace, grant, reply }, ctx) {
    const scopes = body.scopes ?? [...DEFAULT_SCOPES];
    const beyond = scopes.filter((s) => !grant!.scopes.includes(s));
    if (beyond.length > 0)
      throw new RewindError(
        "FORBIDDEN",
        `A token can hand on only scopes it has: ${grant!.id} lacks ${beyond.map((s) => `"${s}"`).join(", ")}; ` +
          `ask for fewer scopes, or have an operator with database access run \`rewind token create --scope ${beyond.join(",")}\``,
        { missingScope: beyond[0] },
      );
    const token = await ctx.store.createToken(namespace, body.label, scopes);
    const id = tokenIdOf(token);
    const made = (await ctx.store.listTokens(namespace)).find((t) => t.id === id)!;
    void reply.code(201);
    return { ...made, token } satisfies z.input<typeof CreatedToken>;
  },
});

export const revokeToken = defineRoute({
  method: "POST",
  path: "/v1/tokens/:id/revoke",
  operationId: "revokeToken",
  summary: "Revoke one of the namespace's API tokens (at once on this API, within 5 s on others)",
  access: "operate",
  params: TokenIdParams,
  bodyOptional: true,
  responses: { 200: { description: "The token, revoked", schema: TokenView } },
  errors: [401, 403, 404, 422, 503],
  async handle({ params, namespace }, ctx) {
    return (await ctx.store.revokeToken(params.id, namespace)) satisfies z.input<typeof TokenView>;
  },
});
