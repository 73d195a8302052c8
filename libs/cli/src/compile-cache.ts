import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import path from "node:path";
import type { CompiledScript } from "@rewind/sandbox/compiler";

/**
 * `rewind run` compiles its script each time, and loading esbuild and starting its service is
 * most of a short command's time. The bundle is kept per entry file in the user's cache folder
 * (as Deno keeps its compiled modules) with what it was built from: every source file's SHA-256,
 * and whatever could change how an import resolves or compiles (the folders those files are in,
 * and up the tree the tsconfig.json, jsconfig.json, package.json and node_modules that esbuild
 * may consult). While all of it is unchanged and the compiler is the same, the kept bundle is
 * the one esbuild would build; on any doubt the script is compiled again.
 * `REWIND_CACHE_DIR` moves the cache; set to "" it turns it off.
 */
interface CacheEntry {
  compiler: string;
  /** `f:<file>` → its SHA-256, `d:<folder>` → its mtime; "" for one that does not exist. */
  stamps: Record<string, string>;
  script: CompiledScript;
}

const CONFIG_FILES = ["tsconfig.json", "jsconfig.json", "package.json"];

export async function compileCached(file: string): Promise<CompiledScript> {
  const entryFile = path.resolve(file);
  const slot = cacheSlot(entryFile);
  const kept = slot === undefined ? undefined : read(slot.file, slot.compiler);
  if (kept !== undefined) return kept;
  const started = Date.now();
  const { compileWithInputs } = await import("@rewind/sandbox/compiler");
  const { script, inputs } = await compileWithInputs({ file: entryFile });
  if (slot !== undefined) write(slot.file, { compiler: slot.compiler, script }, inputs, started);
  return script;
}

function cacheSlot(entryFile: string): { file: string; compiler: string } | undefined {
  const configured = process.env.REWIND_CACHE_DIR;
  if (configured === "") return undefined;
  const base = process.env.XDG_CACHE_HOME || path.join(homedir(), ".cache");
  const folder = configured ?? path.join(base, "rewind", "scripts");
  const compiler = compilerId();
  // esbuild's bundle names its files relative to the working folder: that is an input too.
  const key = sha256(`${compiler}\n${process.cwd()}\n${entryFile}`).slice(0, 32);
  return { file: path.join(folder, `${key}.json`), compiler };
}

/** The compiler's own code and esbuild's version: a new Rewind or esbuild builds anew. */
function compilerId(): string {
  const require = createRequire(import.meta.url);
  const compiler = require.resolve("@rewind/sandbox/compiler");
  const esbuild = path.join(path.dirname(require.resolve("esbuild")), "..", "package.json");
  return sha256(`${readFileSync(compiler, "utf8")}\n${readFileSync(esbuild, "utf8")}`);
}

function read(slot: string, compiler: string): CompiledScript | undefined {
  try {
    // Only from a folder no one else can write to: a bundle planted there would run as the script.
    const folder = statSync(path.dirname(slot));
    if (folder.uid !== process.getuid?.() || (folder.mode & 0o022) !== 0) return undefined;
    const entry = JSON.parse(readFileSync(slot, "utf8")) as CacheEntry;
    if (entry.compiler !== compiler) return undefined;
    for (const [key, stamp] of Object.entries(entry.stamps))
      if (stampOf(key) !== stamp) return undefined;
    return entry.script;
  } catch {
    return undefined; // none yet, or unreadable
  }
}

function write(
  slot: string,
  entry: Omit<CacheEntry, "stamps">,
  inputs: readonly string[],
  started: number,
): void {
  try {
    const stamps: Record<string, string> = {};
    for (const input of inputs) {
      // Changed while it compiled: what esbuild read may not be what would be stamped now.
      const folder = path.dirname(input);
      if (statSync(input).mtimeMs >= started || statSync(folder).mtimeMs >= started) return;
      stamps[`f:${input}`] = stamps[`d:${folder}`] = "";
      for (let up = folder; !(`d:${path.join(up, "node_modules")}` in stamps);) {
        for (const name of CONFIG_FILES) stamps[`f:${path.join(up, name)}`] = "";
        stamps[`d:${path.join(up, "node_modules")}`] = "";
        if (path.dirname(up) === up) break;
        up = path.dirname(up);
      }
    }
    for (const key of Object.keys(stamps)) stamps[key] = stampOf(key);
    mkdirSync(path.dirname(slot), { recursive: true, mode: 0o700 });
    const temporary = `${slot}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify({ ...entry, stamps }), { mode: 0o600 });
    renameSync(temporary, slot); // whole or not at all, whoever reads it meanwhile
  } catch {
    // A cache that cannot be written only costs the next run a compile.
  }
}

/** A file's SHA-256 or a folder's mtime, "" when it does not exist. */
function stampOf(key: string): string {
  const target = key.slice(2);
  try {
    return key.startsWith("f:") ? sha256(readFileSync(target)) : String(statSync(target).mtimeMs);
  } catch {
    return "";
  }
}

function sha256(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}
