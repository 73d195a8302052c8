import type { TokenView } from "@rewind/sdk";
import { DEFAULT_SCOPES, RewindError, type Scope } from "@rewind/core";
import { checkScopes, openStore, tokenIdOf, type Store } from "@rewind/store";
import { client } from "../client.js";
import { dim } from "../format.js";

/*
 * `rewind token create|list|revoke`. They work on the database itself (DATABASE_URL, or the
 * embedded one under .rewind/): that is how the first token of a deployment is made, and how an
 * operator reaches every namespace. Beside a running `rewind dev` the embedded folder is its
 * alone (two processes on it lose writes): then they go through its API, with the token it saved,
 * in the namespace of that token.
 */

type Where = { kind: "store"; store: Store } | { kind: "server"; reason: string };

async function open(): Promise<Where> {
  const url = process.env.DATABASE_URL;
  try {
    // The embedded folder is migrated as `rewind dev` would; a server's schema is `rewind migrate`'s.
    return {
      kind: "store",
      store: await openStore(url ? { databaseUrl: url } : { migrate: true }),
    };
  } catch (error) {
    // Only the embedded folder held by another process sends them to its API.
    if (url || !(error instanceof RewindError) || error.details.lockedBy === undefined) throw error;
    return { kind: "server", reason: error.message };
  }
}

async function withTokens<T>(
  direct: (store: Store) => Promise<T>,
  viaServer: () => Promise<T>,
): Promise<T> {
  const where = await open();
  if (where.kind === "server") {
    process.stderr.write(
      dim(
        `The embedded database is open in \`rewind dev\`: asking its API (${process.env.REWIND_URL ?? "http://localhost:7420"}) instead\n`,
      ),
    );
    return viaServer();
  }
  try {
    return await direct(where.store);
  } finally {
    await where.store.close();
  }
}

function scopesOf(option: string | undefined): Scope[] {
  if (option === undefined) return [...DEFAULT_SCOPES];
  return checkScopes(
    option
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== ""),
  );
}

/** `rewind token create [--namespace N] [--label L] [--scope read,run,…]`: printed once. */
export async function createCommand(options: {
  namespace?: string;
  label?: string;
  scope?: string;
}): Promise<number> {
  const scopes = scopesOf(options.scope);
  const label = options.label ?? "cli";
  const made = await withTokens(
    async (store) => {
      const token = await store.createToken(options.namespace ?? "default", label, scopes);
      return { token, id: tokenIdOf(token) };
    },
    async () => {
      const made = await client().tokens.create({ label, scopes });
      if (options.namespace !== undefined && options.namespace !== made.namespace) {
        await client().tokens.revoke(made.id);
        throw new RewindError(
          "INVALID_INPUT",
          `Through \`rewind dev\`'s API a token is made in its own namespace (${made.namespace}), not ${options.namespace}: stop \`rewind dev\` and run this again to reach any namespace`,
        );
      }
      return made;
    },
  );
  // The token alone on stdout, so that TOKEN=$(rewind token create) works; its id beside it.
  process.stdout.write(`${made.token}\n`);
  process.stderr.write(
    dim(`${made.id} (${scopes.join(", ")}): revoke it with rewind token revoke ${made.id}\n`),
  );
  return 0;
}

/** `rewind token list [--namespace N] [--json]`: ids, labels, scopes; never a token. */
export async function listCommand(options: {
  namespace?: string;
  json?: boolean;
}): Promise<number> {
  const tokens: TokenView[] = await withTokens(
    (store) => store.listTokens(options.namespace),
    async () => (await client().tokens.list()).tokens,
  );
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ tokens }, null, 2)}\n`);
    return 0;
  }
  const rows = tokens.map((t) => [
    t.id,
    t.namespace,
    t.label,
    t.scopes.join(","),
    t.createdAt.slice(0, 19).replace("T", " "),
    t.revokedAt === null ? "" : `revoked ${t.revokedAt.slice(0, 19).replace("T", " ")}`,
  ]);
  const header = ["id", "namespace", "label", "scopes", "created", ""];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  process.stdout.write(`${[dim(line(header)), ...rows.map(line)].join("\n")}\n`);
  return 0;
}

/** `rewind token revoke <id>`: the token stops working (at once on this API, within 5 s elsewhere). */
export async function revokeCommand(id: string): Promise<number> {
  const revoked = await withTokens(
    (store) => store.revokeToken(id),
    () => client().tokens.revoke(id),
  );
  process.stdout.write(`revoked ${revoked.id} (${revoked.label}@${revoked.namespace})\n`);
  return 0;
}
