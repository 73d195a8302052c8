import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { initCommand } from "../src/commands/init.js";

/** This test's own folder, removed after it; `dir` is where the project is (it, or one inside). */
let root: string;
let dir: string;
beforeEach(() => {
  root = dir = mkdtempSync(path.join(tmpdir(), "rewind-init-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const manifest = () =>
  JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as {
    name: string;
    type: string;
    scripts: Record<string, string>;
    dependencies: Record<string, string>;
    allowScripts: Record<string, boolean>;
  };

describe("rewind init", () => {
  it("scaffolds a script, its toolset, typed tsconfigs, a test and npm scripts", async () => {
    expect(await initCommand(path.join(dir, "My App"))).toBe(0);
    dir = path.join(dir, "My App");
    for (const file of [
      "tools.ts",
      "rewind.d.ts",
      "scripts/hello.ts",
      "scripts/tsconfig.json",
      "tsconfig.json",
      "test/hello.test.js",
    ])
      expect(existsSync(path.join(dir, file)), file).toBe(true);
    const scripts = JSON.parse(readFileSync(path.join(dir, "scripts/tsconfig.json"), "utf8")) as {
      compilerOptions: { types: string[]; paths: Record<string, string[]> };
    };
    expect(scripts.compilerOptions.types).toEqual([]);
    expect(scripts.compilerOptions.paths).toEqual({ rewind: ["../rewind.d.ts"] });
    expect(manifest()).toMatchObject({
      name: "my-app",
      type: "module",
      scripts: { test: "node --test", typecheck: "tsc -p . && tsc -p scripts" },
      dependencies: {
        "@rewind/cli": expect.stringMatching(/^\^\d/),
        "@rewind/testing": expect.any(String),
      },
      allowScripts: { "isolated-vm": true, esbuild: true },
    });
  });

  it("adds to an existing package.json without replacing what is there", async () => {
    writeFileSync(
      path.join(dir, "package.json"),
      JSON.stringify({
        name: "shop",
        scripts: { test: "vitest" },
        dependencies: { "@rewind/sdk": "1.2.3" },
      }),
    );
    await initCommand(dir);
    expect(manifest()).toMatchObject({
      name: "shop",
      scripts: { test: "vitest", dev: "rewind dev --toolset tools.ts" },
      dependencies: { "@rewind/sdk": "1.2.3", "@rewind/cli": expect.any(String) },
    });
  });

  it("writes nothing over existing files, and says which", async () => {
    writeFileSync(path.join(dir, "tools.ts"), "// mine\n");
    await expect(initCommand(dir)).rejects.toThrow(/has tools\.ts: run it in a new folder/);
    expect(readFileSync(path.join(dir, "tools.ts"), "utf8")).toBe("// mine\n");
    expect(existsSync(path.join(dir, "package.json"))).toBe(false);
  });

  it("refuses a CommonJS package, which the scaffold's ES modules would not run in", async () => {
    writeFileSync(path.join(dir, "package.json"), JSON.stringify({ type: "commonjs" }));
    await expect(initCommand(dir)).rejects.toThrow(/"type": "commonjs".*set "type": "module"/);
  });
});
