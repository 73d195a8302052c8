import { existsSync, readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  scripts?: Record<string, string>;
  gypfile?: boolean;
}

/** Where Node finds package `name` from `dir`: the nearest node_modules folder up the tree. */
function locate(name: string, dir: string): string {
  for (let at = dir; ; at = path.dirname(at)) {
    const candidate = path.join(at, "node_modules", name);
    if (existsSync(path.join(candidate, "package.json"))) return realpathSync(candidate);
    if (path.dirname(at) === at) throw new Error(`${name} is not installed (looked from ${dir})`);
  }
}

/** Every package installing `root` installs: its dependencies and theirs, with their folders. */
function closure(root: string): Map<string, { dir: string; manifest: Manifest }> {
  const seen = new Map<string, { dir: string; manifest: Manifest }>();
  const visit = (dir: string) => {
    const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as Manifest;
    if (seen.has(`${manifest.name}@${dir}`)) return;
    seen.set(`${manifest.name}@${dir}`, { dir, manifest });
    for (const name of Object.keys({
      ...manifest.dependencies,
      ...manifest.optionalDependencies,
    })) {
      visit(locate(name, dir));
    }
  };
  visit(root);
  return seen;
}

const sdk = fileURLToPath(new URL("..", import.meta.url));
const INSTALL_SCRIPTS = ["preinstall", "install", "postinstall"];

describe("@rewind/sdk's dependencies", () => {
  // The client runs in a team's own services: installing it must compile nothing and must not
  // pull in the sandbox (isolated-vm is a native addon built from source on some Node versions).
  it("install no native addon and run no install script", () => {
    const packages = [...closure(sdk).values()];
    expect(packages.map((p) => p.manifest.name)).toContain("@rewind/core");
    const native = packages.filter(
      ({ dir, manifest }) =>
        manifest.gypfile === true ||
        existsSync(path.join(dir, "binding.gyp")) ||
        INSTALL_SCRIPTS.some((script) => manifest.scripts?.[script] !== undefined),
    );
    expect(native.map((p) => p.manifest.name)).toEqual([]);
    const names = packages.map((p) => p.manifest.name);
    for (const forbidden of ["@rewind/sandbox", "@rewind/executor", "isolated-vm", "esbuild"]) {
      expect(names).not.toContain(forbidden);
    }
  });
});
