/**
 * Which isolated-vm this Node runs scripts with. No one build of isolated-vm loads on every
 * supported Node: 5.0.4 (epoch 1's) compiles only against Node 20's headers, 7.0.1 ships prebuilt
 * binaries only for Node 24 and later. `@rewind/sandbox` lists both as optional dependencies,
 * 5.0.4 wrapped in `@rewind/isolated-vm-legacy` whose `engines` stop before 24, so npm installs on
 * each Node the one it can load (HOW_IT_WORKS.md, "One build, every Node"). This file only
 * chooses and loads the package; host.ts is the one file that uses what it loads.
 */
import { createRequire } from "node:module";
import path from "node:path";
import type ivm from "isolated-vm";

const require = createRequire(import.meta.url);

export interface EnginePackage {
  /** The package the sandbox requires on this Node. */
  name: "isolated-vm" | "@rewind/isolated-vm-legacy";
  /** The Node majors it loads on, for messages. */
  nodes: string;
}

/** The engine a Node major loads: isolated-vm 7 from Node 24 on, 5.0.4 (wrapped) before. */
export function enginePackage(
  nodeMajor = Number(process.versions.node.split(".")[0]),
): EnginePackage {
  return nodeMajor >= 24
    ? { name: "isolated-vm", nodes: "Node 24 and later" }
    : { name: "@rewind/isolated-vm-legacy", nodes: "Node 20" };
}

function notInstalled(engine: EnginePackage, error: unknown): Error {
  const why = error instanceof Error ? error.message.split("\n")[0] : String(error);
  return new Error(
    `The sandbox runs scripts on ${process.version} with ${engine.name} (the isolated-vm for ` +
      `${engine.nodes}), which did not load: ${why}. Run \`npm ci\` with this same Node: npm installs ` +
      `the isolated-vm each Node can load (5.0.4, built from source, on Node 20; 7.0.1, prebuilt, on ` +
      `Node 24 and 26), so a node_modules installed with another Node lacks it.`,
  );
}

let loaded: typeof ivm | undefined;

/** isolated-vm as this Node can load it; loaded once, on first use (it is a native addon). */
export function loadIsolatedVm(): typeof ivm {
  if (loaded !== undefined) return loaded;
  const engine = enginePackage();
  try {
    loaded = require(engine.name) as typeof ivm;
  } catch (error) {
    throw notInstalled(engine, error);
  }
  return loaded;
}

/**
 * The version of the isolated-vm this Node loads (the one inside the wrapper on Node 20), or
 * "none" when it is not installed: an epoch names it, and a process without it serves no epoch.
 */
export function isolatedVmVersion(): string {
  const engine = enginePackage();
  try {
    let from = path.dirname(require.resolve(`${engine.name}/package.json`));
    if (engine.name !== "isolated-vm")
      from = path.dirname(require.resolve("isolated-vm/package.json", { paths: [from] }));
    return (require(path.join(from, "package.json")) as { version: string }).version;
  } catch {
    return "none";
  }
}

let mathE: boolean | undefined;

/**
 * Whether this process's isolated-vm contexts have `Math.E`. On Node 20 they do only when the
 * process runs with `--no-node-snapshot` (otherwise V8's snapshot keeps it under another key):
 * epoch 1 was recorded without it, so a process whose contexts have it cannot replay epoch 1
 * (epochs.ts). Probed once, in an isolate of its own.
 */
export function contextsHaveMathE(): boolean {
  if (mathE !== undefined) return mathE;
  const isolate = new (loadIsolatedVm().Isolate)({ memoryLimit: 8 });
  try {
    const script = isolate.compileScriptSync(`Object.hasOwn(Math, "E")`);
    mathE = script.runSync(isolate.createContextSync()) === true;
  } finally {
    isolate.dispose();
  }
  return mathE;
}
