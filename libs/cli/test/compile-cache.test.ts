import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  utimesSync,
  writeFileSync as write,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { compileCached } from "../src/compile-cache.js";

/**
 * Writes a file dated in the past (the cache keeps nothing written while it compiled, as files a
 * test has just made would be); a new file moves its folder's date, as on any disk.
 */
let dated = Date.parse("2020-01-01T00:00:00Z") / 1000;
function writeFileSync(file: string, text: string): void {
  const created = !existsSync(file);
  write(file, text);
  utimesSync(file, dated, dated);
  if (created) utimesSync(path.dirname(file), ++dated, dated);
}

let work: string;
let cache: string;
const saved = process.env.REWIND_CACHE_DIR;

beforeEach(() => {
  work = mkdtempSync(path.join(tmpdir(), "rewind-cc-work-"));
  cache = mkdtempSync(path.join(tmpdir(), "rewind-cc-cache-")); // 0700, as the default would be
  process.env.REWIND_CACHE_DIR = cache;
  mkdirSync(path.join(work, "lib"));
  writeFileSync(
    path.join(work, "main.ts"),
    `import { tools } from "rewind";\nimport { n } from "./lib/n";\n` +
      `export default async function main() { return (await tools.noop({})) ?? n; }\n`,
  );
  writeFileSync(path.join(work, "lib", "n.ts"), "export const n = 1;\n");
});
afterEach(() => {
  if (saved === undefined) delete process.env.REWIND_CACHE_DIR;
  else process.env.REWIND_CACHE_DIR = saved;
  rmSync(work, { recursive: true, force: true });
  rmSync(cache, { recursive: true, force: true });
});

/**
 * Compiles once, then marks the kept bundle: a later compile that answers the mark came from the
 * cache, one that answers real code was built anew.
 */
async function compileThenMark(): Promise<void> {
  const first = await compileCached(path.join(work, "main.ts"));
  expect(first.code).toContain("n = 1");
  const [slot] = readdirSync(cache);
  const file = path.join(cache, slot!);
  const entry = JSON.parse(readFileSync(file, "utf8")) as { script: { code: string } };
  entry.script.code = "/* from the cache */";
  write(file, JSON.stringify(entry));
}
const fromCache = async () =>
  (await compileCached(path.join(work, "main.ts"))).code === "/* from the cache */";

describe("rewind run's compile cache", () => {
  it("answers the kept bundle while nothing it was built from changed", async () => {
    await compileThenMark();
    expect(await fromCache()).toBe(true);
  });

  it("builds anew when a source file changes", async () => {
    await compileThenMark();
    writeFileSync(path.join(work, "lib", "n.ts"), "export const n = 2;\n");
    const script = await compileCached(path.join(work, "main.ts"));
    expect(script.code).toContain("n = 2");
  });

  it("builds anew when a new file could change what an import resolves to", async () => {
    await compileThenMark();
    // ./lib/n resolves to n.tsx before n.ts: the folder changed, so the bundle may have.
    writeFileSync(path.join(work, "lib", "n.tsx"), "export const n = 3;\n");
    const script = await compileCached(path.join(work, "main.ts"));
    expect(script.code).toContain("n = 3");
  });

  it("builds anew when a tsconfig.json appears or changes up the tree", async () => {
    await compileThenMark();
    writeFileSync(path.join(work, "tsconfig.json"), "{}\n");
    expect(await fromCache()).toBe(false);
    await compileThenMark();
    writeFileSync(path.join(work, "tsconfig.json"), '{"compilerOptions":{}}\n');
    expect(await fromCache()).toBe(false);
  });

  it("builds anew from another working folder (the bundle names files relative to it)", async () => {
    await compileThenMark();
    const cwd = process.cwd();
    try {
      process.chdir(work);
      expect(await fromCache()).toBe(false);
    } finally {
      process.chdir(cwd);
    }
  });

  it("never reads from a folder others can write to", async () => {
    await compileThenMark();
    chmodSync(cache, 0o777);
    expect(await fromCache()).toBe(false);
  });

  it('keeps nothing when REWIND_CACHE_DIR is ""', async () => {
    process.env.REWIND_CACHE_DIR = "";
    await compileCached(path.join(work, "main.ts"));
    expect(readdirSync(cache)).toEqual([]);
  });
});
