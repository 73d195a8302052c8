/**
 * What the API can tell is wrong with a submission before it stores anything: a script that does
 * not compile, a source map that cannot be read, a value too large or too deeply nested for a run
 * to carry, and NUL characters the database cannot hold. Each is refused with the field at fault,
 * instead of being stored and retried into a CRASH_LOOP, or answered as a retryable 503.
 */
import { Script } from "node:vm";
import { RewindError } from "@rewind/core";
import { SourceMapper } from "@rewind/sandbox";
import { describeBytes, invalidInput } from "./errors.js";

/** The sandbox's default limit on one value crossing its wall (an input, a payload, a result). */
export const DEFAULT_MAX_VALUE_BYTES = 4 * 1024 * 1024;
/**
 * The deepest nesting of arrays and objects a value may have. Values 2,000 deep go through a run
 * and back; 5,000 overflow the stack of code that walks them recursively (canonical JSON, the
 * guest's JSON). 1,000 leaves room for what the script wraps around them.
 */
export const MAX_VALUE_DEPTH = 1000;

export interface SubmittedScript {
  entry: string;
  code: string;
  sourceMap: string;
}

/** Refuses a compiled script the sandbox could not load: checked before it is stored. */
export function checkScript(script: SubmittedScript, field: string): void {
  for (const key of ["entry", "code", "sourceMap"] as const) {
    const at = script[key].indexOf("\u0000");
    if (at >= 0) {
      throw invalidInput(
        `${field}.${key}`,
        `holds a NUL character (U+0000) at offset ${at}, which scripts may not contain: remove it, or write it as the escape "\\u0000" in a string literal`,
      );
    }
  }
  try {
    checkSourceMap(script.sourceMap);
    // What the sandbox does with it: a map it cannot build would fail every run of the script.
    new SourceMapper(script.sourceMap).callsite("1:0");
  } catch (error) {
    throw invalidInput(
      `${field}.sourceMap`,
      `is not a source map that can be read (${(error as Error).message}): send the map rewind's compiler emitted with the code (version 3 JSON with "sources" and "mappings")`,
    );
  }
  try {
    // Parsed, never run: the API's V8 reports the syntax errors the sandbox's would.
    new Script(script.code, { filename: script.entry });
  } catch (error) {
    const line = /:(\d+)\n/.exec((error as Error).stack ?? "")?.[1];
    const where = line === undefined ? "" : ` at line ${line} of the compiled code`;
    throw new RewindError(
      "COMPILE_ERROR",
      `${field}.code: does not compile${where}: ${(error as Error).name}: ${(error as Error).message}. Compile the script with rewind's compiler (rewind run does) and send its output unchanged`,
      { field: `${field}.code` },
    );
  }
}

/** Base64 VLQ digits and their separators: the decoder reads anything else as garbage, silently. */
const MAPPINGS = /^[A-Za-z0-9+/,;]*$/;

function checkSourceMap(text: string): void {
  const map: unknown = JSON.parse(text);
  if (map === null || typeof map !== "object" || Array.isArray(map))
    throw new TypeError("it is not a JSON object");
  const { version, sources, sourceRoot, mappings } = map as Record<string, unknown>;
  if (version !== 3) throw new TypeError(`its version is ${JSON.stringify(version)}, not 3`);
  if (!Array.isArray(sources) || !sources.every((s) => typeof s === "string" || s === null))
    throw new TypeError('"sources" is not a list of file names');
  // Its file names become the callsites of journal entries: a database holds no NUL.
  if ([...sources, sourceRoot].some((s) => typeof s === "string" && s.includes("\u0000")))
    throw new TypeError('a file name in "sources" or "sourceRoot" holds a NUL character (U+0000)');
  if (typeof mappings !== "string" || !MAPPINGS.test(mappings))
    throw new TypeError('"mappings" is not a string of base64 VLQ segments');
}

/** Refuses a value a run cannot carry: over the value limit, or nested deeper than it can walk. */
export function checkValue(value: unknown, field: string, maxValueBytes: number): void {
  const path = tooDeep(value, field);
  if (path !== undefined) {
    const at = path.length > 80 ? `${path.slice(0, 80)}…` : path;
    throw invalidInput(
      field,
      `is nested more than ${MAX_VALUE_DEPTH} arrays or objects deep (at ${at}), deeper than a run can carry: flatten the value (a list of items with parent ids instead of a tree, for example)`,
    );
  }
  // Bytes of JSON, as the sandbox counts them.
  const bytes = Buffer.byteLength(JSON.stringify(value ?? null));
  if (bytes > maxValueBytes) {
    throw new RewindError(
      "PAYLOAD_TOO_LARGE",
      `${field}: is ${bytes} bytes of JSON, over the limit of ${describeBytes(maxValueBytes)} on one value: pass large data by reference (a URL or an id a tool can fetch)`,
      { field },
    );
  }
}

/** The path of the first value nested deeper than the limit, found without recursion. */
function tooDeep(value: unknown, field: string): string | undefined {
  const stack: [unknown, number, string][] = [[value, 0, field]];
  while (stack.length > 0) {
    const [node, depth, path] = stack.pop()!;
    if (node === null || typeof node !== "object") continue;
    if (depth >= MAX_VALUE_DEPTH) return path;
    const entries = Array.isArray(node)
      ? node.map((item, i) => [String(i), item] as const)
      : Object.entries(node);
    for (const [key, item] of entries) {
      // Only containers can nest: leaves need no stack slot.
      if (item !== null && typeof item === "object")
        stack.push([item, depth + 1, `${path}.${key}`]);
    }
  }
  return undefined;
}
