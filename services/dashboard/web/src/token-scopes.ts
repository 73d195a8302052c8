/**
 * What the tab's token may do, asked of the API once per token (GET /v1/token): actions it may
 * not take are shown disabled, with the reason, rather than offered and refused.
 */
import { useEffect, useState } from "preact/hooks";
import type { Api, TokenSelf } from "./api.js";

export type Scope = TokenSelf["scopes"][number];

const asked = new WeakMap<Api, Promise<TokenSelf>>();

export function useToken(api: Api): TokenSelf | undefined {
  const [token, setToken] = useState<TokenSelf>();
  useEffect(() => {
    let answer = asked.get(api);
    if (answer === undefined) {
      answer = api.whoami();
      asked.set(api, answer);
    }
    answer.then(setToken, () => asked.delete(api));
  }, [api]);
  return token;
}

/** Why an action needing `scope` is disabled, or undefined when the token has it (or is not known yet). */
export function lacking(
  token: TokenSelf | undefined,
  scope: Scope,
  what: string,
): string | undefined {
  if (token === undefined || token.scopes.includes(scope)) return undefined;
  return `${what} needs a token with the "${scope}" scope; this one (${token.label}@${token.namespace}) has ${token.scopes.join(", ")}.`;
}
