/** The API tokens' requests and responses (GET/POST /v1/tokens, POST /v1/tokens/:id/revoke). */
import { SCOPES } from "@rewind/core";
import { z } from "zod";

export const Scope = z.enum(SCOPES).meta({
  description:
    "read: see runs · run: start and steer runs · operate: quarantine, tokens, limits · metrics: scrape /metrics",
});

export const TokenView = z.object({
  id: z.string().meta({ description: "tok_ and 16 hex digits of the token's SHA-256" }),
  namespace: z.string(),
  label: z.string(),
  scopes: z.array(Scope),
  createdAt: z.string(),
  revokedAt: z.string().nullable(),
});

export const TokenSelf = TokenView.pick({
  id: true,
  namespace: true,
  label: true,
  scopes: true,
}).meta({
  description: "The token the request carries: what a client (the dashboard) may offer its user",
});

export const TokenList = z.object({ tokens: z.array(TokenView) });

export const CreateTokenBody = z.strictObject({
  label: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[^\u0000-\u001f]*$/, { error: "label must have no control characters" })
    .meta({ description: "A note to know the token by (who or what uses it)" }),
  scopes: z
    .array(Scope)
    .min(1)
    .max(SCOPES.length)
    .optional()
    .meta({ description: "Default: read, run, operate. Only scopes the caller's token has." }),
});

export const CreatedToken = TokenView.extend({
  token: z.string().meta({ description: "The token itself: shown this once, stored only hashed" }),
});

export const TokenIdParams = z.strictObject({
  id: z.string().regex(/^tok_[0-9a-f]{16}$/, {
    error: "id must be tok_ and 16 hex digits (rewind token list)",
  }),
});

// ---- the TypeScript types of the wire
export type TokenView = z.output<typeof TokenView>;
export type TokenSelf = z.output<typeof TokenSelf>;
export type TokenList = z.output<typeof TokenList>;
export type CreateToken = z.input<typeof CreateTokenBody>;
export type CreatedToken = z.output<typeof CreatedToken>;
