/**
 * The digests that pin an epoch's code, computed from this checkout. Comments, whitespace and
 * types do not count (both are bundles without them): only code that runs changes a digest.
 */
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { guestBundle } from "@rewind/sandbox";

/** The code that decides whether a replay matches its journal, host side. */
const MATCHING_SOURCES = {
  RunEngine: "../../journal/src/engine.ts",
  parseCommands: "../../sandbox/src/commands.ts",
  eventToWire: "../../sandbox/src/commands.ts",
};

/** The digest of `epoch`'s guest runtime (each epoch has its own: guest-bundle.ts). */
export function sandboxDigest(epoch: number): string {
  return guestBundle(epoch).digest;
}

/**
 * `sha256:` of one bundle of the replay engine (with what it imports to compare commands:
 * canonical JSON, entry order, labels) and the host's parsing of the guest's commands.
 */
export function matchingDigest(): string {
  const lines = Object.entries(MATCHING_SOURCES).map(
    ([name, file]) =>
      `export { ${name} } from ${JSON.stringify(fileURLToPath(new URL(file, import.meta.url)))};`,
  );
  const result = esbuild.buildSync({
    stdin: { contents: lines.join("\n"), resolveDir: process.cwd(), loader: "ts" },
    bundle: true,
    write: false,
    format: "esm",
    platform: "node",
    target: "es2022",
    conditions: ["@rewind/source"],
    legalComments: "none",
    // No whitespace or path comments: the digest must not depend on where the repo is checked out.
    minifyWhitespace: true,
    logLevel: "silent",
  });
  const code = result.outputFiles[0]!.text;
  return `sha256:${createHash("sha256").update(code).digest("hex")}`;
}
