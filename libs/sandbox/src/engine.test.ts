import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { enginePackage, isolatedVmVersion, loadIsolatedVm } from "./engine.js";

const json = (url: URL) => JSON.parse(readFileSync(url, "utf8")) as Record<string, any>;
const root = new URL("../../../", import.meta.url);
const major = Number(process.versions.node.split(".")[0]);

describe("the isolated-vm each Node loads", () => {
  it("is isolated-vm 7 from Node 24 on, the wrapped 5.0.4 before", () => {
    expect(enginePackage(20).name).toBe("@rewind/isolated-vm-legacy");
    expect(enginePackage(24).name).toBe("isolated-vm");
    expect(enginePackage(26).name).toBe("isolated-vm");
  });

  it("loads on this Node, and is the version this Node's epochs name", () => {
    const ivm = loadIsolatedVm();
    const isolate = new ivm.Isolate({ memoryLimit: 16 });
    try {
      expect(isolate.compileScriptSync("6 * 7").runSync(isolate.createContextSync())).toBe(42);
    } finally {
      isolate.dispose();
    }
    expect(isolatedVmVersion()).toBe(major >= 24 ? "7.0.1" : "5.0.4");
  });

  it("is installed by npm only where it loads: both optional, the legacy one's engines end before 24", () => {
    const sandbox = json(new URL("libs/sandbox/package.json", root));
    expect(sandbox.dependencies["isolated-vm"]).toBeUndefined();
    expect(sandbox.optionalDependencies).toEqual({
      "@rewind/isolated-vm-legacy": "file:../../vendor/isolated-vm-legacy",
      "isolated-vm": "7.0.1",
    });
    const lock = json(new URL("package-lock.json", root));
    expect(lock.packages["libs/sandbox/node_modules/isolated-vm"].engines.node).toBe(">=24.0.0");
    expect(lock.packages["vendor/isolated-vm-legacy"].engines.node).toBe(">=20.19 <24");
  });

  it("wraps isolated-vm 5.0.4 in a package that packs and publishes like any other", () => {
    const legacy = json(new URL("vendor/isolated-vm-legacy/package.json", root));
    expect(legacy).toMatchObject({
      name: "@rewind/isolated-vm-legacy",
      license: expect.any(String),
      dependencies: { "isolated-vm": "5.0.4" },
      files: expect.arrayContaining(["index.js"]),
    });
    expect(legacy.private).toBeUndefined();
    // Outside the workspaces, or npm on Node 24 would install (and compile) it as a workspace.
    const workspaces = json(new URL("package.json", root)).workspaces as string[];
    expect(workspaces.some((w) => w.startsWith("vendor"))).toBe(false);
  });
});
