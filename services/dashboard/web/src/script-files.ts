/**
 * A script's files as its author wrote them, read from a compiled script's source map (whose
 * sourcesContent holds every file bundled), and the line a callsite points at.
 */
import { lineOf } from "./format.js";

export type ScriptFiles = Map<string, string>;

/** The author's files of a compiled script: no "rewind" module, no generated entry. */
export function filesOf(sourceMap: string): ScriptFiles {
  const files: ScriptFiles = new Map();
  try {
    const map = JSON.parse(sourceMap) as { sources?: string[]; sourcesContent?: (string | null)[] };
    (map.sources ?? []).forEach((name, index) => {
      const content = map.sourcesContent?.[index];
      if (typeof content !== "string") return;
      if (name.startsWith("rewind:") || name === "rewind-entry.js") return;
      files.set(name, content);
    });
  } catch {
    // A map that is not JSON names no files: the page says the source is missing.
  }
  return files;
}

/** The text of the line `callsite` (file:line:column) points at, untrimmed; undefined if unknown. */
export function lineAt(
  files: ScriptFiles,
  callsite: string | undefined,
): { file: string; line: number; text: string } | undefined {
  const at = lineOf(callsite);
  if (at === undefined) return undefined;
  const base = (name: string) => name.slice(name.lastIndexOf("/") + 1);
  const content =
    files.get(at.file) ??
    [...files].find(([name]) => name.endsWith(`/${at.file}`) || base(name) === base(at.file))?.[1];
  const text = content?.split("\n")[at.line - 1];
  return text === undefined ? undefined : { file: at.file, line: at.line, text };
}
