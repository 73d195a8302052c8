/**
 * Packs the packages a user installs, as `npm publish` would ship them: every package of the
 * closure of @rewind/cli, @rewind/sdk and @rewind/testing (workspace packages, and packages kept
 * outside the workspaces that one of them references as a `file:` dependency).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";

interface Manifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

export interface Packed {
  name: string;
  dir: string;
  tarball: string;
}

const read = (dir: string) =>
  JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as Manifest;

function workspaces(root: string): Map<string, string> {
  const byName = new Map<string, string>();
  for (const group of ["libs", "services"]) {
    for (const entry of readdirSync(path.join(root, group))) {
      const dir = path.join(root, group, entry);
      if (existsSync(path.join(dir, "package.json"))) byName.set(read(dir).name, dir);
    }
  }
  return byName;
}

/** The folders of every package installing `roots` installs from this repository. */
export function closure(root: string, roots: readonly string[]): Map<string, string> {
  const byName = workspaces(root);
  const found = new Map<string, string>();
  const visit = (name: string, dir: string) => {
    if (found.has(name)) return;
    found.set(name, dir);
    const manifest = read(dir);
    for (const [dep, spec] of Object.entries({
      ...manifest.dependencies,
      ...manifest.optionalDependencies,
    })) {
      if (spec.startsWith("file:")) visit(dep, path.resolve(dir, spec.slice("file:".length)));
      else if (byName.has(dep)) visit(dep, byName.get(dep)!);
    }
  };
  for (const name of roots) {
    const dir = byName.get(name);
    if (dir === undefined) throw new Error(`${name} is not a package of this repository`);
    visit(name, dir);
  }
  return found;
}

/** `npm pack`s each folder into `destination`; returns each package's tarball. */
export function packAll(packages: Map<string, string>, destination: string): Packed[] {
  const output = execFileSync(
    "npm",
    ["pack", "--json", "--pack-destination", destination, ...packages.values()],
    { cwd: destination, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
  );
  const results = JSON.parse(output) as { name: string; filename: string }[];
  return results.map((result) => ({
    name: result.name,
    dir: packages.get(result.name)!,
    tarball: path.join(destination, result.filename),
  }));
}

/**
 * isolated-vm 5 (Node 20 and 22) installs a prebuilt addon when prebuild-install finds one, and
 * compiles from source otherwise (ten minutes on a busy two-core machine). The addon this
 * machine's own install built is offered through prebuild-install's local-prebuilds folder, so
 * the packed install takes the path a user with a published prebuild takes. Returns the
 * environment for `npm install`, or nothing when there is no such addon to offer.
 */
export function offerLocalPrebuild(root: string, destination: string): NodeJS.ProcessEnv {
  const sandbox = path.join(root, "libs/sandbox");
  let dir: string | undefined;
  for (let at = sandbox; dir === undefined; at = path.dirname(at)) {
    const candidate = path.join(at, "node_modules/isolated-vm");
    if (existsSync(path.join(candidate, "package.json"))) dir = candidate;
    else if (path.dirname(at) === at) return {};
  }
  const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as {
    version: string;
    scripts?: Record<string, string>;
  };
  const addon = "out/isolated_vm.node";
  if (
    !manifest.scripts?.install?.includes("prebuild-install") ||
    !existsSync(path.join(dir, addon))
  )
    return {};
  const { platform, arch } = process;
  const name = `isolated-vm-v${manifest.version}-node-v${process.versions.modules}-${platform}-${arch}.tar.gz`;
  execFileSync("tar", ["-czf", path.join(destination, name), "-C", dir, addon]);
  return { npm_config_isolated_vm_local_prebuilds: destination };
}
