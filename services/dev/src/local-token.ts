import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Store } from "@rewind/store";

/**
 * The embedded default's API token: created once, kept in `<dataDir>/token` (readable by this
 * user only) so the CLI beside it works without setup, and printed at start-up.
 */
export async function localToken(store: Store, dataDir: string): Promise<string> {
  const file = path.join(dataDir, "token");
  if (existsSync(file)) {
    const token = readFileSync(file, "utf8").trim();
    if ((await store.authenticate(token)) !== undefined) return token;
  }
  const token = await store.createToken("default", "rewind dev");
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return token;
}
