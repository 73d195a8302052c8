import { RewindError } from "@rewind/core";
import type { Store } from "@rewind/store";
import type { FastifyRequest } from "fastify";

const HOW =
  "send the header Authorization: Bearer <token> with an API token of your namespace (the CLI reads it from REWIND_TOKEN)";

/** The namespace the request's bearer token grants; every run operation is scoped to it. */
export async function authenticate(request: FastifyRequest, store: Store): Promise<string> {
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
  const namespace = await store.authenticate(match[1]!);
  if (namespace === undefined) {
    throw new RewindError(
      "UNAUTHORIZED",
      "The API token is unknown or revoked: check REWIND_TOKEN, or ask an operator for a new token",
    );
  }
  return namespace;
}

/**
 * Who is asking, as journal entries name them (`run.released` by, a give-up's by): the API
 * token's label and its namespace, e.g. "ci@default". The request is already authenticated.
 */
export async function callerOf(request: FastifyRequest, store: Store): Promise<string> {
  const token = /^Bearer[ ]+(\S+)\s*$/i.exec(request.headers.authorization ?? "")?.[1];
  const who = token === undefined ? undefined : await store.identify(token);
  if (who === undefined)
    throw new RewindError(
      "UNAUTHORIZED",
      "The API token is unknown or revoked: check REWIND_TOKEN",
    );
  return `${who.label}@${who.namespace}`;
}
