import { createHash, randomBytes } from "node:crypto";
import { RewindError, SCOPES, isScope, type Scope } from "@rewind/core";
import type { SqlClient } from "./sql.js";

/** A token as the store knows it: never its plaintext, which is shown once at creation. */
export interface TokenInfo {
  /** `tok_` and the first 16 hex digits of the token's SHA-256: names it in lists and revokes. */
  id: string;
  namespace: string;
  label: string;
  scopes: Scope[];
  createdAt: string;
  revokedAt: string | null;
}

/** What an accepted token grants a request. */
export interface TokenGrant {
  id: string;
  namespace: string;
  label: string;
  scopes: readonly Scope[];
}

/** Only the SHA-256 is stored: a copy of the database gives no one a working token. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

const ID_DIGITS = 16;

function idOf(hash: string): string {
  return `tok_${hash.slice(0, ID_DIGITS)}`;
}

/** The id a token is listed and revoked by. */
export function tokenIdOf(token: string): string {
  return idOf(hashToken(token));
}

/** The hash prefix a token id names, or undefined for a string that is no token id. */
function hashPrefixOf(id: string): string | undefined {
  return new RegExp(`^tok_([0-9a-f]{${ID_DIGITS}})$`).exec(id)?.[1];
}

export function checkScopes(scopes: readonly string[]): Scope[] {
  if (scopes.length === 0)
    throw new RewindError(
      "INVALID_INPUT",
      `A token needs at least one scope: name some of ${SCOPES.join(", ")}`,
    );
  for (const scope of scopes)
    if (!isScope(scope))
      throw new RewindError(
        "INVALID_INPUT",
        `"${scope}" is not a token scope: the scopes are ${SCOPES.join(", ")}`,
      );
  return SCOPES.filter((s) => scopes.includes(s));
}

export async function createToken(
  sql: SqlClient,
  namespace: string,
  label: string,
  scopes: readonly string[],
): Promise<string> {
  const granted = checkScopes(scopes);
  const token = `rw_${randomBytes(24).toString("base64url")}`;
  const hash = hashToken(token);
  await sql.query(
    "INSERT INTO rw_api_tokens (token_hash, namespace, label, scopes) VALUES ($1, $2, $3, $4::text[])",
    [hash, namespace, label, granted],
  );
  return token;
}

interface TokenRow {
  token_hash: string;
  namespace: string;
  label: string;
  scopes: string[];
  created_at: Date | string;
  revoked_at: Date | string | null;
}

function grantOf(row: TokenRow): TokenGrant {
  return {
    id: idOf(row.token_hash),
    namespace: row.namespace,
    label: row.label,
    scopes: row.scopes.filter(isScope),
  };
}

/** The grant of a live token, or undefined for an unknown or revoked one. */
export async function lookUpToken(sql: SqlClient, token: string): Promise<TokenGrant | undefined> {
  const rows = await sql.query<TokenRow>(
    "SELECT token_hash, namespace, label, scopes, created_at, revoked_at FROM rw_api_tokens WHERE token_hash = $1 AND revoked_at IS NULL",
    [hashToken(token)],
  );
  return rows[0] === undefined ? undefined : grantOf(rows[0]);
}

const iso = (at: Date | string) => new Date(at).toISOString();

/** A namespace's tokens (every namespace's without one), revoked ones too, oldest first. */
export async function listTokens(sql: SqlClient, namespace?: string): Promise<TokenInfo[]> {
  const rows = await sql.query<TokenRow>(
    `SELECT token_hash, namespace, label, scopes, created_at, revoked_at FROM rw_api_tokens
     ${namespace === undefined ? "" : "WHERE namespace = $1"} ORDER BY created_at, token_hash`,
    namespace === undefined ? [] : [namespace],
  );
  return rows.map((row) => ({
    ...grantOf(row),
    scopes: [...grantOf(row).scopes],
    createdAt: iso(row.created_at),
    revokedAt: row.revoked_at === null ? null : iso(row.revoked_at),
  }));
}

/**
 * Revokes a token by id (within `namespace` when given: a tenant revokes only its own). Answers
 * the token as it now is; an unknown id is NOT_FOUND. Revoking twice keeps the first time.
 */
export async function revokeToken(
  sql: SqlClient,
  id: string,
  namespace?: string,
): Promise<TokenInfo> {
  const prefix = hashPrefixOf(id);
  const missing = () =>
    new RewindError(
      "NOT_FOUND",
      `No API token ${JSON.stringify(id)}${namespace === undefined ? "" : ` in namespace ${namespace}`}: \`rewind token list\` shows the ids (tok_ and 16 hex digits)`,
      { tokenId: id },
    );
  if (prefix === undefined) throw missing();
  const params: unknown[] = [`${prefix}%`];
  if (namespace !== undefined) params.push(namespace);
  const rows = await sql.query<{ token_hash: string }>(
    `UPDATE rw_api_tokens SET revoked_at = coalesce(revoked_at, now())
     WHERE token_hash LIKE $1 ${namespace === undefined ? "" : "AND namespace = $2"}
     RETURNING token_hash`,
    params,
  );
  if (rows.length === 0) throw missing();
  const all = await listTokens(sql, namespace);
  return all.find((t) => t.id === id)!;
}
