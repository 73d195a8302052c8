// Module hooks (loader thread) for register.mjs: a relative `./x.js` falls back to `./x.ts`, and
// .ts files are transformed to ESM by esbuild (the toolchain's own, as vitest uses it). Workspace
// packages resolve to their sources through the "@rewind/source" condition the pool passes.
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { transform } from "esbuild";

export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (error) {
    if (!/^\.\.?\/.*\.js$/.test(specifier)) throw error;
    return next(specifier.replace(/\.js$/, ".ts"), context);
  }
}

export async function load(url, context, next) {
  if (!url.startsWith("file:") || !url.endsWith(".ts")) return next(url, context);
  const file = fileURLToPath(url);
  const { code } = await transform(await readFile(file, "utf8"), {
    loader: "ts",
    format: "esm",
    target: "node20",
    sourcemap: "inline",
    sourcefile: file,
  });
  return { format: "module", source: code, shortCircuit: true };
}
