/**
 * What an API token may do. Each HTTP route declares the one scope it needs (docs/tokens.md has
 * the table): `read` sees a namespace's runs, `run` starts and steers them, `operate` acts on
 * quarantine, tokens and limits, `metrics` scrapes /metrics (every namespace's aggregates, so it
 * is a scope of its own that no other implies).
 */
export const SCOPES = ["read", "run", "operate", "metrics"] as const;
export type Scope = (typeof SCOPES)[number];

/** What a token gets when none are named: what every token could do before scopes existed. */
export const DEFAULT_SCOPES: readonly Scope[] = ["read", "run", "operate"];

export function isScope(value: unknown): value is Scope {
  return typeof value === "string" && (SCOPES as readonly string[]).includes(value);
}
