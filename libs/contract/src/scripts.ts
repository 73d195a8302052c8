/** POST /v1/scripts/compile: a script sent as text, compiled by the API without reading a file. */
import { z } from "zod";
import { RunScript } from "./replay.js";
export { CompileProblem } from "./runs.js";

/** The most files one submitted script may have. */
export const MAX_SCRIPT_FILES = 64;
/** The most bytes (UTF-8) of source all files of a submitted script may hold together. */
export const MAX_SCRIPT_SOURCE_BYTES = 1024 * 1024;

/** A relative path below the script's root: segments of letters, digits, `.`, `_`, `-`. */
const FILE_NAME =
  /^(?:[A-Za-z0-9_][A-Za-z0-9._-]*\/)*[A-Za-z0-9_][A-Za-z0-9._-]*\.(?:c|m)?[jt]sx?$/;
const FILE_NAME_ERROR =
  "must be a relative path below the script's root ending in .ts or .js, e.g. lib/price.ts (no leading /, no ./ or ../ segments)";

const fileName = z
  .string()
  .max(256, { error: "must be at most 256 characters" })
  .regex(FILE_NAME, { error: FILE_NAME_ERROR });

export const CompileScriptBody = z
  .strictObject({
    entry: fileName.meta({
      description: "The file whose default export is the script, e.g. main.ts (one of files)",
    }),
    files: z.record(z.string(), z.string()).meta({
      description: `The script's files by relative path, their sources as text (at most ${MAX_SCRIPT_FILES} files, ${MAX_SCRIPT_SOURCE_BYTES / 1024} KiB in all). Imports resolve among them and "rewind" only`,
    }),
  })
  .superRefine((body, ctx) => {
    const names = Object.keys(body.files);
    if (names.length > MAX_SCRIPT_FILES)
      ctx.addIssue({
        code: "custom",
        path: ["files"],
        message: `holds ${names.length} files, more than the ${MAX_SCRIPT_FILES} a script may have: bundle some together`,
      });
    for (const name of names) {
      if (!FILE_NAME.test(name) || name.length > 256)
        ctx.addIssue({
          code: "custom",
          path: ["files", name],
          message: `is not a file name: it ${FILE_NAME_ERROR}`,
        });
    }
    const bytes = names.reduce((sum, name) => sum + utf8Bytes(body.files[name]!), 0);
    if (bytes > MAX_SCRIPT_SOURCE_BYTES)
      ctx.addIssue({
        code: "custom",
        path: ["files"],
        message: `holds ${bytes} bytes of source, more than the ${MAX_SCRIPT_SOURCE_BYTES} (1 MiB) a script may have: compile it with \`rewind run\` or make it smaller`,
      });
    if (!Object.hasOwn(body.files, body.entry))
      ctx.addIssue({
        code: "custom",
        path: ["entry"],
        message: `names ${body.entry}, which is not among the files (${names.slice(0, 10).join(", ") || "none"}): name one of them`,
      });
  });

/** UTF-8 length without encoding: the contract is also read in browsers (no Buffer there). */
function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit < 0xdc00) {
      bytes += 4; // a surrogate pair: one code point of four bytes
      i++;
    } else bytes += 3;
  }
  return bytes;
}

export const CompiledScriptView = RunScript.meta({
  description:
    "The compiled script: pass it as `script` to POST /v1/runs, /fork or /replay (it is stored then, by its hash)",
});

// ---- the TypeScript types of the wire
export type CompileScript = z.input<typeof CompileScriptBody>;
export type CompiledScriptView = z.output<typeof CompiledScriptView>;
