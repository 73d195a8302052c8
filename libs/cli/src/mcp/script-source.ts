import { RewindError } from "@rewind/core";
import { compileScript } from "@rewind/sandbox/compiler";

/** A script as the API takes it: compiled here, so a model can send TypeScript source. */
export interface ScriptUpload {
  entry: string;
  code: string;
  sourceMap: string;
}

/**
 * Compiles the source a model sends (TypeScript or JavaScript, `import { tools } from "rewind"`).
 * A script that does not compile is a COMPILE_ERROR naming the line, for the model to fix.
 */
export async function compileSource(source: string, filename: string): Promise<ScriptUpload> {
  if (!/^[\w.-]+\.(c|m)?(t|j)sx?$/.test(filename))
    throw new RewindError(
      "INVALID_INPUT",
      `filename "${filename}" is not a script's name: use a plain name ending in .ts or .js, e.g. fixed.ts`,
    );
  if (source.trim() === "")
    throw new RewindError(
      "INVALID_INPUT",
      "The script is empty: send the whole module, with its `export default async function`",
    );
  const compiled = await compileScript({ source, filename });
  return { entry: compiled.entry, code: compiled.code, sourceMap: compiled.sourceMap };
}

/** The original sources a compiled script was built from, by file name (from its source map). */
export function sourcesOf(sourceMap: string): Map<string, string> {
  const map = JSON.parse(sourceMap) as { sources?: string[]; sourcesContent?: (string | null)[] };
  const files = new Map<string, string>();
  (map.sources ?? []).forEach((file, i) => {
    const content = map.sourcesContent?.[i];
    if (typeof content === "string" && file !== "rewind:rewind" && !file.startsWith("rewind:"))
      files.set(file, content);
  });
  return files;
}

/** The line of source a callsite (`file.ts:line:column`) points at, trimmed; undefined if unknown. */
export function sourceLine(sourceMap: string, callsite: string | undefined): string | undefined {
  const match = callsite === undefined ? null : /^(.*):(\d+):(\d+)$/.exec(callsite);
  if (match === null) return undefined;
  const [, file, line] = match;
  for (const [name, content] of sourcesOf(sourceMap)) {
    if (name === file || name.endsWith(`/${file}`))
      return content.split("\n")[Number(line) - 1]?.trim();
  }
  return undefined;
}
