import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { RewindError } from "@rewind/core";

/** The compiled guest runtime and the digest that pins it (a determinism epoch names it). */
export interface GuestBundle {
  code: string;
  digest: string;
}

const EPOCH_1_ENTRY = "guest/runtime.ts";
const STANDARD_ENTRY = "guest/standard/runtime.ts";

/**
 * Each epoch's guest runtime, by its entry file under `src/`. The build carries every live
 * epoch's: epoch 1's (`guest/runtime.ts`) is frozen as released, the standard-JavaScript runtime
 * of epochs 2-4 (`guest/standard/runtime.ts`) reuses its unchanged modules and replaces the rest
 * (HOW_IT_WORKS.md, "One guest runtime per epoch"). A new epoch whose runtime changes adds an
 * entry of its own; one that only changes the engine reuses its predecessor's.
 */
const GUEST_ENTRIES: Readonly<Record<number, string>> = {
  1: EPOCH_1_ENTRY,
  2: STANDARD_ENTRY,
  3: STANDARD_ENTRY,
  4: STANDARD_ENTRY,
};

/** The entry file of `epoch`'s guest runtime; SANDBOX_ERROR for an epoch this build lacks. */
export function guestEntry(epoch: number): string {
  const entry = GUEST_ENTRIES[epoch];
  if (entry === undefined)
    throw new RewindError(
      "SANDBOX_ERROR",
      `This build has no guest runtime for epoch ${String(epoch)} (it has epochs ` +
        `${Object.keys(GUEST_ENTRIES).join(", ")}): run the epoch's runs on a build that supports it`,
    );
  return entry;
}

/** True when `epoch`'s guest computes local time in the process's zone (epoch 1's, TZ=UTC). */
export function guestUsesProcessZone(epoch: number): boolean {
  return guestEntry(epoch) === EPOCH_1_ENTRY;
}

const cached = new Map<string, GuestBundle>();

/**
 * Bundles `epoch`'s guest runtime into one script. Always from the TypeScript source (shipped
 * with the package), whether the host runs from `src/` or `dist/`, so the bytes the isolate
 * evaluates, and their digest, do not depend on how the host was built.
 */
export function guestBundle(epoch: number): GuestBundle {
  const entryFile = guestEntry(epoch);
  const hit = cached.get(entryFile);
  if (hit !== undefined) return hit;
  const entry = fileURLToPath(new URL(`../src/${entryFile}`, import.meta.url));
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
  const bundle = { code, digest: `sha256:${createHash("sha256").update(code).digest("hex")}` };
  cached.set(entryFile, bundle);
  return bundle;
}
