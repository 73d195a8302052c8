import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { Rewind, httpFetch } from "@rewind/sdk";

/** Where `rewind dev` leaves its local token, so the CLI beside it needs no setup. */
export const LOCAL_TOKEN_FILE = path.join(".rewind", "token");

/** The API client: REWIND_URL and REWIND_TOKEN, or the token `rewind dev` wrote under .rewind/. */
export function client(): Rewind {
  let token = process.env.REWIND_TOKEN;
  if (token === undefined && existsSync(LOCAL_TOKEN_FILE))
    token = readFileSync(LOCAL_TOKEN_FILE, "utf8").trim();
  return new Rewind({ fetch: httpFetch(), ...(token === undefined ? {} : { token }) });
}
