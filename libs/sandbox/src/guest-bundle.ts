import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

/** The compiled guest runtime and the digest that pins it (a determinism epoch names it). */
export interface GuestBundle {
  code: string;
  digest: string;
}

let cached: GuestBundle | undefined;

/**
 * Bundles `src/guest/runtime.ts` into one script. Always from the TypeScript source (shipped with
 * the package), whether the host runs from `src/` or `dist/`, so the bytes the isolate evaluates,
 * and their digest, do not depend on how the host was built.
 */
export function guestBundle(): GuestBundle {
  if (cached !== undefined) return cached;
  const entry = fileURLToPath(new URL("../src/guest/runtime.ts", import.meta.url));
  const result = esbuild.buildSync({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: "iife",
    platform: "neutral",
    target: "es2022",
    conditions: ["@rewind/source"],
    // The compiler options spelled out, not read from the tsconfig.json files around the source:
    // an installed package has no repository tsconfig to extend, and the bytes (`"use strict"`
    // among them) must be the same there as in the repository.
    tsconfigRaw: {
      compilerOptions: { strict: true, target: "ES2022", verbatimModuleSyntax: true },
    },
    legalComments: "none",
    // No whitespace or path comments: the digest must not depend on where the repo is checked out.
    minifyWhitespace: true,
    logLevel: "silent",
  });
  const code = result.outputFiles[0]!.text;
  cached = { code, digest: `sha256:${createHash("sha256").update(code).digest("hex")}` };
  return cached;
}
