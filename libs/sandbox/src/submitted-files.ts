import path from "node:path";
import type * as esbuild from "esbuild";

/**
 * A script sent as text (the dashboard's paste box, an upload): its files by relative path, e.g.
 * `{ "main.ts": "…", "lib/price.ts": "…" }`. Compiling it reads no file of the machine it runs
 * on: imports resolve among these files and "rewind" only.
 */
export interface SubmittedFiles {
  entry: string;
  files: Readonly<Record<string, string>>;
}

/** The esbuild namespace submitted files live in: never "file", so esbuild never opens a path. */
export const SUBMITTED = "submitted";

/** The extensions an import without one may mean, in the order TypeScript tries them. */
const EXTENSIONS = [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"];

/**
 * Resolves every import of a submitted file among the submitted files: `./x`, `../lib/x` (not
 * above the script's root), with or without an extension, `./x.js` meaning `x.ts` as TypeScript
 * writes it, `./dir` meaning `dir/index.ts`. Anything else (a package, a Node built-in, an
 * absolute path, a path above the root) is a compile error saying what may be imported.
 */
export function submittedFilesPlugin(submitted: SubmittedFiles): esbuild.Plugin {
  const names = Object.keys(submitted.files);
  const known = new Set(names);
  const listed = names.slice(0, 10).join(", ") + (names.length > 10 ? ", …" : "");
  return {
    name: "rewind-submitted-files",
    setup(build) {
      build.onResolve({ filter: /^rewind:entry$/ }, () => ({
        path: submitted.entry,
        namespace: SUBMITTED,
      }));
      build.onResolve({ filter: /.*/, namespace: SUBMITTED }, (args) => {
        const spec = args.path;
        if (!spec.startsWith("./") && !spec.startsWith("../"))
          return refuse(
            `"${spec}" is not one of the submitted files: a script imports only "rewind" and ` +
              `relative paths among its files (${listed}); Node built-ins, packages and absolute paths do not exist in the sandbox`,
          );
        const joined = path.posix.normalize(
          path.posix.join(path.posix.dirname(args.importer), spec),
        );
        if (joined.startsWith("../") || joined === "..")
          return refuse(
            `"${spec}" (from ${args.importer}) leads above the script's root folder: import only among the submitted files (${listed})`,
          );
        const found = candidates(joined).find((name) => known.has(name));
        if (found === undefined)
          return refuse(
            `"${spec}" (from ${args.importer}) is not among the submitted files (${listed}): add ${joined} to the files or fix the path`,
          );
        return { path: found, namespace: SUBMITTED };
      });
      build.onLoad({ filter: /.*/, namespace: SUBMITTED }, (args) => ({
        contents: submitted.files[args.path] ?? "",
        loader: loaderOf(args.path),
      }));
    },
  };
}

function refuse(text: string): esbuild.OnResolveResult {
  return { errors: [{ text }] };
}

/** The file names an import of `name` may mean, most literal first. */
function candidates(name: string): string[] {
  const stem = name.replace(/\.(c|m)?js$/, "");
  return [
    name,
    ...EXTENSIONS.map((ext) => `${name}${ext}`),
    ...(stem !== name ? [".ts", ".tsx", ".mts", ".cts"].map((ext) => `${stem}${ext}`) : []),
    ...EXTENSIONS.map((ext) => `${name}/index${ext}`),
  ];
}

function loaderOf(file: string): esbuild.Loader {
  if (/\.(c|m)?tsx$/.test(file) || file.endsWith(".tsx")) return "tsx";
  if (/\.(c|m)?ts$/.test(file)) return "ts";
  if (file.endsWith(".jsx")) return "jsx";
  if (file.endsWith(".json")) return "json";
  return "js";
}
