// Installs the extra Node runtimes CI tests Rewind on (scripts/tools.json, `nodeRuntimes`), from
// the npm registry's `node-<platform>-<arch>` packages: each holds the `node` binary and its
// headers (`include/node`, which node-gyp reads through npm_config_nodedir). No npm comes with
// them: run this repository's npm with the installed Node first on PATH. Everything lands in one
// cache folder (REWIND_NODE_DIR, default ~/.cache/rewind/node), one folder per version, so a
// second run costs nothing.
//
//   node scripts/install-node.mjs            install every pinned runtime, print where
//   node scripts/install-node.mjs 24 26      install those majors only
//   node scripts/install-node.mjs --bin 24   print the folder to put first on PATH (installing it)
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const pinsFile = fileURLToPath(new URL("tools.json", import.meta.url));
const pins = JSON.parse(readFileSync(pinsFile, "utf8")).nodeRuntimes;

/** Where a pinned major's Node is (or will be). */
export function nodePaths(major) {
  const version = pins[major];
  if (version === undefined)
    throw new Error(
      `Node ${major} is not pinned in scripts/tools.json (pinned: ${Object.keys(pins).join(", ")}): ` +
        `add it under "nodeRuntimes" or ask for one of those`,
    );
  const root = process.env.REWIND_NODE_DIR || path.join(homedir(), ".cache", "rewind", "node");
  const home = path.join(root, `${version}-${process.platform}-${process.arch}`);
  return { version, home, bin: path.join(home, "bin"), node: path.join(home, "bin", "node") };
}

/** Downloads and unpacks one runtime unless it is there; returns its paths. */
export function installNode(major) {
  const paths = nodePaths(major);
  if (existsSync(path.join(paths.home, "complete"))) return paths;
  const spec = `node-${process.platform}-${process.arch}@${paths.version}`;
  const staging = `${paths.home}.partial`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  console.error(`Installing Node ${paths.version} (${spec} from the npm registry)`);
  try {
    const tarball = execFileSync("npm", ["pack", spec, "--silent", "--pack-destination", staging], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    }).trim();
    execFileSync(
      "tar",
      ["xzf", path.join(staging, tarball), "-C", staging, "--strip-components=1", "package"],
      { stdio: "inherit" },
    );
    rmSync(path.join(staging, tarball));
  } catch (error) {
    console.error(
      `✗ Could not install Node ${paths.version}: \`npm pack ${spec}\` failed (above). This needs the npm ` +
        `registry; on a platform without a ${spec} package, install Node ${major} yourself and put it first on PATH.`,
    );
    throw error;
  }
  // The marker is written last, and the folder moved into place whole, so an interrupted
  // download is never mistaken for an installed runtime.
  writeFileSync(path.join(staging, "complete"), `${spec}\n`);
  rmSync(paths.home, { recursive: true, force: true });
  renameSync(staging, paths.home);
  return paths;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const binOnly = args[0] === "--bin";
  const majors = (binOnly ? args.slice(1) : args).filter(Boolean);
  const wanted = majors.length > 0 ? majors : Object.keys(pins);
  try {
    for (const major of wanted) {
      const paths = installNode(major);
      console.log(binOnly ? paths.bin : `Node ${paths.version}: ${paths.node}`);
    }
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
}
