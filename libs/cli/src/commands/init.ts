import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { RewindError } from "@rewind/core";
import { green } from "../format.js";
import { cliVersion } from "../version.js";
import { SCRIPT, npmScripts, scaffoldFiles } from "../scaffold/files.js";

interface PackageJson {
  name?: string;
  type?: string;
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  allowScripts?: Record<string, boolean>;
  [field: string]: unknown;
}

/** The packages a scaffolded project needs; a dependency already listed is left as it is. */
function dependencies(): { dependencies: Record<string, string>; dev: Record<string, string> } {
  const ours = `^${cliVersion()}`;
  return {
    dependencies: { "@rewind/cli": ours, "@rewind/sdk": ours, "@rewind/testing": ours },
    dev: { typescript: "~5.9.3", "@types/node": "^20.19.0" },
  };
}

/**
 * `rewind init [dir]`: scaffolds a project (see scaffold/files.ts). Writes no file that exists
 * already (it says which, and writes nothing); adds its npm scripts and dependencies to an
 * existing package.json without replacing any.
 */
export async function initCommand(dir: string | undefined): Promise<number> {
  const root = path.resolve(dir ?? ".");
  const taken = Object.keys(scaffoldFiles).filter((file) => existsSync(path.join(root, file)));
  if (taken.length > 0) {
    throw new RewindError(
      "INVALID_INPUT",
      `rewind init writes nothing over existing files, and ${root} has ${taken.join(", ")}: ` +
        "run it in a new folder (rewind init my-app), or move those files away",
    );
  }
  const manifestFile = path.join(root, "package.json");
  const manifest: PackageJson = existsSync(manifestFile)
    ? (JSON.parse(await readFile(manifestFile, "utf8")) as PackageJson)
    : {
        name: path
          .basename(root)
          .toLowerCase()
          .replace(/[^a-z0-9._-]/g, "-"),
        private: true,
      };
  if (manifest.type !== undefined && manifest.type !== "module") {
    throw new RewindError(
      "INVALID_INPUT",
      `${manifestFile} says "type": ${JSON.stringify(manifest.type)}; the scaffold's tests and toolset are ES modules: set "type": "module" or run rewind init in a new folder`,
    );
  }
  manifest.type = "module";
  const { dependencies: deps, dev } = dependencies();
  manifest.scripts = { ...npmScripts, ...manifest.scripts };
  manifest.dependencies = { ...deps, ...manifest.dependencies };
  manifest.devDependencies = { ...dev, ...manifest.devDependencies };
  // npm 11 runs no install script it was not allowed: the sandbox's isolated-vm builds or
  // fetches its native addon in one, the script compiler's esbuild checks its binary in one.
  manifest.allowScripts ??= { esbuild: true, "isolated-vm": true };

  for (const [file, text] of Object.entries(scaffoldFiles)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), text, { flag: "wx" });
  }
  await writeFile(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);

  const relative = path.relative(process.cwd(), root);
  const cd = relative.startsWith("..") ? root : relative;
  process.stdout.write(
    [
      `${green("Created")} a Rewind project in ${root}: ${Object.keys(scaffoldFiles).join(", ")}, package.json`,
      "Next:",
      ...(cd ? [`  cd ${cd}`] : []),
      "  npm install",
      "  npm test              # the script against mock tools, in virtual time",
      "  npm run typecheck     # scripts typed by the toolset",
      "  npm run dev           # the platform on http://localhost:7420 (leave it running)",
      `  npm run hello         # in another terminal: run ${SCRIPT} on it`,
      "",
    ].join("\n"),
  );
  return 0;
}
