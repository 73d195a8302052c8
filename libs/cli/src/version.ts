import { readFileSync } from "node:fs";

/** This CLI's version, from its package.json (one folder above src/ and dist/ alike). */
export function cliVersion(): string {
  const manifest = JSON.parse(
    readFileSync(new URL("../package.json", import.meta.url), "utf8"),
  ) as { version: string };
  return manifest.version;
}
