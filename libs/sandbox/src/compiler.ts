import { createHash } from "node:crypto";
import path from "node:path";
import * as esbuild from "esbuild";
import { RewindError } from "@rewind/core";
import { SCRIPT_FILE } from "./guest/callsite.js";
import { SUBMITTED, submittedFilesPlugin, type SubmittedFiles } from "./submitted-files.js";

/** A script compiled for the sandbox: one bundle, identified by the SHA-256 of its code. */
export interface CompiledScript {
  /** `sha256:` of the compiled code: what a run records and what the store keys scripts by. */
  hash: string;
  code: string;
  /** Source map (JSON) with sources content, relative to the script's folder. */
  sourceMap: string;
  /** The entry file's name as the author knows it, e.g. `order.ts`. */
  entry: string;
}

export type ScriptSource =
  { file: string } | { source: string; filename: string; resolveDir?: string } | SubmittedFiles;

/** Where a compile error is: the file (as the author names it), line and column (1-based). */
export interface CompileProblem {
  file?: string;
  line?: number;
  column?: number;
  message: string;
}

/**
 * Submitted files compile as if they sat in this folder, which is never read: every import of
 * theirs resolves in memory (submitted-files.ts) and no tsconfig.json is looked up.
 */
const SUBMITTED_ROOT = "/rewind-submitted-script";

const REWIND_MODULE = `const m = globalThis.__rewind_module;
export const tools = m.tools, sleep = m.sleep, waitForSignal = m.waitForSignal;
export default m;`;

/**
 * Compiles a TypeScript or JavaScript ES module (relative imports bundled, `rewind` provided by
 * the guest runtime, source map kept) into one script whose evaluation registers the default
 * export with the runtime. Node built-ins do not exist in the sandbox, so importing one is a
 * compile error that says so.
 */
export async function compileScript(input: ScriptSource): Promise<CompiledScript> {
  return (await compileWithInputs(input)).script;
}

/** As compileScript, and the absolute paths of the files the bundle was built from. */
export async function compileWithInputs(
  input: ScriptSource,
): Promise<{ script: CompiledScript; inputs: string[] }> {
  const submitted = "files" in input ? input : undefined;
  const entryFile = "file" in input ? path.resolve(input.file) : undefined;
  const resolveDir =
    submitted !== undefined
      ? SUBMITTED_ROOT
      : entryFile !== undefined
        ? path.dirname(entryFile)
        : ((input as { resolveDir?: string }).resolveDir ?? process.cwd());
  const entry =
    submitted !== undefined
      ? submitted.entry
      : entryFile !== undefined
        ? path.basename(entryFile)
        : (input as { filename: string }).filename;
  const loader = /\.(c|m)?tsx?$/.test(entry) ? "ts" : "js";
  const mainImport = entryFile ?? "rewind:entry";

  let result: esbuild.BuildResult;
  try {
    result = await esbuild.build({
      stdin: {
        contents: `import main from ${JSON.stringify(mainImport)};\n__rewind_register(main);\n`,
        resolveDir,
        sourcefile: "rewind-entry.js",
      },
      bundle: true,
      write: false,
      format: "iife",
      platform: "neutral",
      target: "es2022",
      outfile: path.join(resolveDir, SCRIPT_FILE),
      sourcemap: "external",
      sourcesContent: true,
      sourceRoot: "",
      logLevel: "silent",
      legalComments: "none",
      metafile: true,
      ...(submitted !== undefined ? { tsconfigRaw: {}, absWorkingDir: process.cwd() } : {}),
      plugins: [
        {
          name: "rewind",
          setup(build: esbuild.PluginBuild) {
            build.onResolve({ filter: /^rewind$/ }, () => ({
              path: "rewind",
              namespace: "rewind",
            }));
            build.onLoad({ filter: /.*/, namespace: "rewind" }, () => ({
              contents: REWIND_MODULE,
              loader: "js",
            }));
            if (submitted !== undefined) void submittedFilesPlugin(submitted).setup(build);
            else if (entryFile === undefined) {
              build.onResolve({ filter: /^rewind:entry$/ }, () => ({
                path: entry,
                namespace: "rewind-entry",
              }));
              build.onLoad({ filter: /.*/, namespace: "rewind-entry" }, () => ({
                contents: (input as { source: string }).source,
                loader,
                resolveDir,
              }));
            }
          },
        },
      ],
    });
  } catch (error) {
    const failure = error as esbuild.BuildFailure;
    const problems: CompileProblem[] = (failure.errors ?? []).map((m) => ({
      ...(m.location
        ? {
            file: authorName(m.location.file),
            line: m.location.line,
            column: m.location.column + 1,
          }
        : {}),
      message: m.text,
    }));
    const messages = problems.map(
      (p) => `${p.file !== undefined ? `${p.file}:${p.line}:${p.column}: ` : ""}${p.message}`,
    );
    throw new RewindError(
      "COMPILE_ERROR",
      `The script ${entry} does not compile:\n${messages.join("\n") || String(error)}\n` +
        `Scripts are ES modules importing only relative files and "rewind" (no Node built-ins).`,
      { entry, problems },
    );
  }
  const files = result.outputFiles ?? [];
  const code = files.find((f) => f.path.endsWith(".js"))?.text;
  const map = files.find((f) => f.path.endsWith(".map"))?.text;
  if (code === undefined || map === undefined) {
    throw new RewindError("COMPILE_ERROR", `Compiling ${entry} produced no output`, { entry });
  }
  // The sourceMappingURL comment names a file that does not exist in the sandbox: drop it.
  const cleanCode = code.replace(/\n\/\/# sourceMappingURL=.*\n?$/, "\n");
  const hash = `sha256:${createHash("sha256").update(cleanCode).digest("hex")}`;
  // Files on disk only: "rewind" and an in-memory entry live in namespaces of their own, and
  // the generated entry (stdin) is named as if it were in the script's folder.
  const stdin = path.join(resolveDir, "rewind-entry.js");
  const inputs = Object.keys(result.metafile?.inputs ?? {})
    .filter((file) => !/^[\w-]+:/.test(file))
    .map((file) => path.resolve(file))
    .filter((file) => file !== stdin);
  return { script: { hash, code: cleanCode, sourceMap: cleanSourceNames(map), entry }, inputs };
}

/** A file as the author knows it: no esbuild namespace prefix on an in-memory file. */
function authorName(file: string): string {
  return file.replace(/^rewind-entry:/, "").replace(new RegExp(`^${SUBMITTED}:`), "");
}

/** Source names as the author knows them (see authorName). */
function cleanSourceNames(mapJson: string): string {
  const map = JSON.parse(mapJson) as { sources: string[] };
  map.sources = map.sources.map(authorName);
  return JSON.stringify(map);
}
