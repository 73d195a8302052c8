import { RewindError } from "@rewind/core";
import type { Scope } from "@rewind/core";
import type { Store, TokenGrant } from "@rewind/store";
import type { FastifyRequest } from "fastify";

const HOW =
  "send the header Authorization: Bearer <token> with an API token of your namespace (the CLI reads it from REWIND_TOKEN)";

/**
 * What a route needs: a token scope (docs/tokens.md has the table, endpoint by endpoint), or
 * `public` for the few that answer anyone (health, the OpenAPI document). Every route declares
 * one: the type has no default, and `registerRoute` refuses a route without it.
 */
export type Access = Scope | "public";

/** The token the request carries, checked: known, live, and holding `scope`. */
export async function authorize(
  request: FastifyRequest,
  store: Store,
  scope: Scope,
): Promise<TokenGrant> {
  const grant = await store.grant(bearerOf(request));
  if (grant === undefined) {
    throw new RewindError(
      "UNAUTHORIZED",
      "The API token is unknown or revoked: check REWIND_TOKEN, or ask an operator for a new token",
    );
  }
  if (!grant.scopes.includes(scope)) {
    throw new RewindError(
      "FORBIDDEN",
      `The API token ${grant.id} (${grant.label}@${grant.namespace}) lacks the scope "${scope}" this request needs (it has ${grant.scopes.join(", ")}): ` +
        `use a token with "${scope}" (an operator makes one with \`rewind token create --scope ${scope}\`)`,
      { missingScope: scope, tokenId: grant.id },
    );
  }
  return grant;
}

function bearerOf(request: FastifyRequest): string {
  const header = request.headers.authorization;
  if (header === undefined || header.trim() === "") {
    throw new RewindError("UNAUTHORIZED", `The request has no API token: ${HOW}`);
  }
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (match === null) {
    throw new RewindError(
      "UNAUTHORIZED",
      `The Authorization header is not of the form "Bearer <token>": ${HOW}`,
    );
  }
  return match[1]!;
}

/**
 * Who is asking, as journal entries name them (`run.released` by, a give-up's by): the API
 * token's label and its namespace, e.g. "ci@default".
 */
export function callerOf(grant: TokenGrant): string {
  return `${grant.label}@${grant.namespace}`;
}
