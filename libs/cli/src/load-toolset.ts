import { rm } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import * as esbuild from "esbuild";
import { RewindError } from "@rewind/core";
import { isToolset, type Toolset } from "@rewind/sdk";

/**
 * Loads the toolsets a module exports (default or named exports made with `defineToolset`).
 * TypeScript modules are compiled with esbuild next to the source (so its packages resolve as
 * they would for the author), imported, and the compiled file removed.
 */
export async function loadToolsets(file: string): Promise<Toolset[]> {
  const absolute = path.resolve(file);
  let module: Record<string, unknown>;
  if (/\.(c|m)?tsx?$/.test(absolute)) {
    const compiled = path.join(
      path.dirname(absolute),
      `.${path.basename(absolute)}.${process.pid}.rewind.mjs`,
    );
    try {
      await esbuild.build({
        entryPoints: [absolute],
        outfile: compiled,
        bundle: true,
        format: "esm",
        platform: "node",
        packages: "external",
        logLevel: "silent",
      });
      module = (await import(pathToFileURL(compiled).href)) as Record<string, unknown>;
    } catch (error) {
      throw new RewindError(
        "INVALID_INPUT",
        `Could not load the toolset module ${file}: ${(error as Error).message}`,
      );
    } finally {
      await rm(compiled, { force: true });
    }
  } else {
    module = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  }
  const toolsets = [...new Set(Object.values(module).filter(isToolset))];
  if (toolsets.length === 0) {
    throw new RewindError(
      "INVALID_INPUT",
      `${file} exports no toolset: export one made with defineToolset("name", { … }) from "@rewind/sdk"`,
    );
  }
  return toolsets;
}
