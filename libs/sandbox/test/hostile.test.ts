/**
 * Hostile scripts against the sandbox: endless loops, allocation bombs, escape attempts, secret
 * hunting, tampering with the built-ins the runtime relies on, oversized values and error
 * reporting. Every test checks that the hostile run ends on its own (failed, with a message that
 * says what to do) and that the host and the Sandbox it used keep serving other runs.
 *
 * A test marked `it.fails` would document a product bug not fixed yet, saying what is wrong and
 * where. They turn red (an "unexpectedly passing" failure) once the bug is fixed: then drop the
 * `.fails`.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { RunEngine } from "@rewind/journal";
import { runInProcess, type InProcessResult } from "@rewind/executor";
import { defineToolset, type JournalEntry, type Toolset } from "@rewind/core";
import { compileScript, Sandbox, type SandboxOptions } from "../src/index.js";

const SEED = "00".repeat(32);
const CPU_LIMIT_MS = 250;
/** A run that appends more entries than this is a runaway: the test stops it (see `run`). */
const MAX_ENTRIES = 200;

const sandboxes: Sandbox[] = [];
function sandbox(options: SandboxOptions = {}): Sandbox {
  const created = new Sandbox({ cpuLimitMs: CPU_LIMIT_MS, ...options });
  sandboxes.push(created);
  return created;
}
const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const s of sandboxes) s.dispose();
  for (const cleanup of cleanups) cleanup();
});

const toolset = defineToolset("hostile", {
  echo: (args: unknown) => ({ echoed: args, value: 7, list: [1, 2, 3] }),
  fail: () => {
    throw new Error("the tool refused");
  },
  big: () => "y".repeat(5000),
});

/**
 * One whole run in mock mode. `onCommit` counts entries and throws past MAX_ENTRIES: an endless
 * run in mock mode never yields to the event loop (tools resolve in microtasks), so a vitest
 * timeout could never fire; this guard turns a runaway into a rejected promise instead.
 */
async function run(
  sb: Sandbox,
  source: string,
  options: { input?: Record<string, unknown>; tools?: Toolset } = {},
): Promise<InProcessResult> {
  const script = await compileScript({ source, filename: "x.ts" });
  let entries = 0;
  return runInProcess({
    script,
    sandbox: sb,
    toolset: options.tools ?? toolset,
    ...(options.input !== undefined ? { input: options.input as never } : {}),
    onCommit: (batch) => {
      entries += batch.length;
      if (entries > MAX_ENTRIES) {
        throw new Error(`runaway run: more than ${MAX_ENTRIES} journal entries`);
      }
    },
  });
}

const kinds = (journal: readonly JournalEntry[]) => journal.map((e) => e.kind);

const NORMAL = `import { tools } from "rewind";
export default async function main(input: { n: number }) {
  const r = (await tools.echo({ n: input.n })) as { echoed: { n: number } };
  console.log("normal run", r.echoed.n);
  return { n: r.echoed.n + 1 };
}`;

/** A plain run in the same Sandbox completes normally: the hostile run harmed nothing else. */
async function expectHealthy(sb: Sandbox): Promise<void> {
  const result = await run(sb, NORMAL, { input: { n: 41 } });
  expect(result.error).toBeUndefined();
  expect(result.status).toBe("completed");
  expect(result.result).toEqual({ n: 42 });
  expect(kinds(result.journal)).toEqual([
    "run.started",
    "call",
    "call.result",
    "output",
    "run.completed",
  ]);
}

/** Counts host timer ticks while `body` runs: proof that the host's event loop kept serving. */
async function withTicks<T>(body: () => Promise<T>): Promise<{ value: T; ticks: number }> {
  let ticks = 0;
  const interval = setInterval(() => ticks++, 10);
  try {
    return { value: await body(), ticks };
  } finally {
    clearInterval(interval);
  }
}

function expectCpuLimit(result: InProcessResult): void {
  expect(result.status).toBe("failed");
  expect(result.error).toMatchObject({ name: "RewindError", code: "CPU_LIMIT" });
  // The message tells the author what happened and what to do.
  expect(result.error!.message).toContain(`more than ${CPU_LIMIT_MS} ms`);
  expect(result.error!.message).toMatch(/endless loop/);
  expect(result.error!.message).toMatch(/split the work across awaits/);
  expect(result.journal.at(-1)?.kind).toBe("run.failed");
}

// ─── Child processes ────────────────────────────────────────────────────────────────────────────

/*
 * Scripts that may kill or hang the host process (the allocation bombs) run in
 * a child process, so this file survives them. The child (vite-node, which resolves the workspace
 * packages to their TypeScript sources like vitest does) makes one Sandbox, runs each source in
 * it with runInProcess and prints one JSON line per run. A child that has not exited after
 * `killAfterMs` is killed with SIGKILL: a hung host ignores SIGTERM (its event loop never runs).
 */
const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const VITE_NODE = path.join(REPO, "node_modules/vite-node/vite-node.mjs");
let childFile: string | undefined;

function childScript(): string {
  if (childFile !== undefined) return childFile;
  const dir = mkdtempSync(path.join(os.tmpdir(), "rewind-hostile-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  childFile = path.join(dir, "hostile-child.mjs");
  const sandboxSrc = path.join(REPO, "libs/sandbox/src/index.ts");
  const executorSrc = path.join(REPO, "libs/executor/src/index.ts");
  const sdkSrc = path.join(REPO, "libs/sdk/src/index.ts");
  writeFileSync(
    childFile,
    `const { compileScript, Sandbox } = await import(${JSON.stringify(sandboxSrc)});
const { runInProcess } = await import(${JSON.stringify(executorSrc)});
const { defineToolset } = await import(${JSON.stringify(sdkSrc)});
process.stdout.write("ready\\n");
const toolset = defineToolset("hostile", {
  echo: (args) => ({ echoed: args, value: 7, list: [1, 2, 3] }),
});
const sandbox = new Sandbox(JSON.parse(process.argv[3]));
for (const source of JSON.parse(process.argv[2])) {
  const script = await compileScript({ source, filename: "x.ts" });
  const r = await runInProcess({ script, sandbox, toolset });
  process.stdout.write(JSON.stringify({ status: r.status, code: r.error?.code, result: r.result }) + "\\n");
}
sandbox.dispose();
`,
  );
  return childFile;
}

interface ChildOutcome {
  code: number | null;
  signal: string | null;
  runs: unknown[];
  stderr: string;
}

function inChild(
  sources: string[],
  options: SandboxOptions,
  killAfterMs = 25_000,
): Promise<ChildOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        VITE_NODE,
        "--config",
        "vitest.config.ts",
        childScript(),
        JSON.stringify(sources),
        JSON.stringify(options),
      ],
      { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    // The time limit is the runs' own: it starts once the child has loaded the sources (which, on
    // a busy machine, can take longer than the runs are given), with a cap on the loading too.
    let timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.stdout.on("data", (chunk: Buffer) => {
      const ready = !stdout.includes("ready\n");
      stdout += chunk.toString();
      if (ready && stdout.includes("ready\n")) {
        clearTimeout(timer);
        timer = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
      }
    });
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const runs = stdout
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as unknown);
      resolve({ code, signal, runs, stderr });
    });
  });
}

// ─── 1. CPU ─────────────────────────────────────────────────────────────────────────────────────

describe("endless loops", () => {
  it("fails a `while (true) {}` in main with CPU_LIMIT (sync mode) and the Sandbox keeps serving", async () => {
    const sb = sandbox({ mode: "sync" });
    const started = Date.now();
    const result = await run(sb, `export default async function main() { while (true) {} }`);
    expectCpuLimit(result);
    expect(kinds(result.journal)).toEqual(["run.started", "run.failed"]);
    expect(Date.now() - started).toBeLessThan(CPU_LIMIT_MS * 8);
    expect(sb.liveRuns).toBe(0);
    await expectHealthy(sb);
  });

  const asyncSandbox = sandbox({ mode: "async" });
  const loops: { where: string; source: string; journal: string[] }[] = [
    {
      where: "main",
      source: `export default async function main() { while (true) {} }`,
      journal: ["run.started", "run.failed"],
    },
    {
      where: "a microtask",
      source: `export default async function main() {
  await Promise.resolve().then(() => { for (;;) {} });
  return "unreachable";
}`,
      journal: ["run.started", "run.failed"],
    },
    {
      where: "the continuation after a tool result",
      source: `import { tools } from "rewind";
export default async function main() {
  await tools.echo({ a: 1 });
  for (;;) {}
}`,
      journal: ["run.started", "call", "call.result", "run.failed"],
    },
    {
      where: "a timer callback",
      source: `export default async function main() {
  setTimeout(() => { for (;;) {} }, 1000);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  return "unreachable";
}`,
      journal: ["run.started", "timer.set", "timer.set", "timer.fired", "run.failed"],
    },
  ];

  it.each(loops)(
    "fails an endless loop in $where with CPU_LIMIT while the host event loop keeps ticking (async mode)",
    async ({ source, journal }) => {
      const { value: result, ticks } = await withTicks(() => run(asyncSandbox, source));
      expectCpuLimit(result);
      expect(kinds(result.journal)).toEqual(journal);
      // ~25 ticks of 10 ms fit in a 250 ms limit; a blocked event loop would give 0 or 1.
      expect(ticks).toBeGreaterThan(5);
      expect(asyncSandbox.liveRuns).toBe(0);
      await expectHealthy(asyncSandbox);
    },
  );

  it("stops a script whose module top level loops, with CPU_LIMIT, while the host serves (async mode)", async () => {
    const script = await compileScript({
      source: `for (;;) {}\nexport default async function main() { return 1; }`,
      filename: "x.ts",
    });
    const instance = await asyncSandbox.instantiate(script, { seed: SEED, startAt: 0 });
    const { value: commands, ticks } = await withTicks(() => instance.start(null));
    expect(commands).toEqual([
      { type: "fail", error: expect.objectContaining({ name: "RewindError", code: "CPU_LIMIT" }) },
    ]);
    const [fail] = commands as unknown as [{ error: { message: string } }];
    expect(fail.error.message).toContain(`more than ${CPU_LIMIT_MS} ms`);
    expect(fail.error.message).toMatch(/endless loop/);
    expect(ticks).toBeGreaterThan(5);
    expect(asyncSandbox.liveRuns).toBe(0);
    await expectHealthy(asyncSandbox);
  });

  it("journals a top-level endless loop as the run's own CPU_LIMIT failure", async () => {
    const result = await run(
      asyncSandbox,
      `for (;;) {}\nexport default async function main() { return 1; }`,
    );
    expectCpuLimit(result);
    expect(kinds(result.journal)).toEqual(["run.started", "run.failed"]);
  });
});

// ─── 2. Memory ──────────────────────────────────────────────────────────────────────────────────

describe("allocation bombs", () => {
  it("fails a growing array of strings with MEMORY_LIMIT, evicts the isolate's other runs, and keeps serving", async () => {
    // The bomb needs ~0.5 s to fill 32 MiB: a larger CPU limit, so memory is what stops it.
    const sb = sandbox({ memoryLimitMb: 32, cpuLimitMs: 5000 });
    // A neighbour sharing the isolate, waiting on a tool call.
    const neighbourScript = await compileScript({
      source: `import { tools } from "rewind";
export default async function main() { return await tools.echo({}); }`,
      filename: "neighbour.ts",
    });
    const neighbour = await sb.instantiate(neighbourScript, { seed: SEED, startAt: 0 });
    expect((await neighbour.start(null)).map((c) => c.type)).toEqual(["call"]);

    const result = await run(
      sb,
      `export default async function main() {
  const hoard: string[] = [];
  for (let i = 0; ; i++) hoard.push("x".repeat(64) + i);
}`,
    );
    expect(result.status).toBe("failed");
    expect(result.error).toMatchObject({ name: "RewindError", code: "MEMORY_LIMIT" });
    expect(result.error!.message).toContain("memory limit of 32 MiB");
    expect(result.error!.message).toMatch(/keep less data in memory, or raise the limit/);
    expect(kinds(result.journal)).toEqual(["run.started", "run.failed"]);

    // The isolate died with the bomb: its other run is evicted, to be replayed cold.
    expect(neighbour.evicted).toBe(true);
    await expect(
      neighbour.deliver({ type: "call.result", id: 1, at: 1, result: null }),
    ).rejects.toMatchObject({ code: "SANDBOX_ERROR", message: expect.stringMatching(/evicted/) });
    neighbour.dispose();

    await expectHealthy(sb);
  });

  // Some bombs kill the host process instead (V8 aborts with "CALL_AND_RETRY_LAST / is_heap_oom"
  // before isolated-vm can dispose the isolate), so they run in a child process (see inChild).
  const AFTER = `export default async function main() { return 42; }`;

  /** The bomb ends its run: MEMORY_LIMIT with the process alive, or the process aborted. */
  async function expectBombEndsRun(bomb: string): Promise<void> {
    const child = await inChild([bomb, AFTER], { memoryLimitMb: 32, cpuLimitMs: 5000 });
    if (child.signal === "SIGABRT" || child.code === 134) return; // the known limitation above
    expect(child.runs, `child stderr:\n${child.stderr.slice(-2000)}`).toEqual([
      { status: "failed", code: "MEMORY_LIMIT" },
      { status: "completed", result: 42 },
    ]);
    expect(child.code).toBe(0);
  }

  async function expectBombContained(bomb: string): Promise<void> {
    const child = await inChild([bomb, AFTER], { memoryLimitMb: 32, cpuLimitMs: 5000 });
    expect(child.runs, `child stderr:\n${child.stderr.slice(-2000)}`).toEqual([
      { status: "failed", code: "MEMORY_LIMIT" },
      { status: "completed", result: 42 },
    ]);
    expect(child.signal).toBeNull();
    expect(child.code).toBe(0);
  }

  it.concurrent(
    "contains the growing array bomb in a child process too (control for the harness below)",
    async () => {
      await expectBombContained(`export default async function main() {
  const hoard: string[] = [];
  for (let i = 0; ; i++) hoard.push("x".repeat(64) + i);
}`);
    },
  );

  // KNOWN LIMITATION (isolated-vm's `memoryLimit` is not a hard limit; laverdet/isolated-vm#527,
  // #107): when one large allocation cannot be satisfied (a big array's backing store, a hash
  // table's rehash), V8 may call its fatal OOM handler and abort the whole process (SIGABRT)
  // instead of failing the run with MEMORY_LIMIT. Which happens varies from run to run. What is
  // guaranteed: the bomb ends its own run either way (never hangs, never completes, never spoils
  // the next run), and a run that keeps aborting its process is failed by the executor with
  // CRASH_LOOP after five loads (libs/executor/test/live.int.test.ts). The full fix is to run
  // isolates in supervised child processes (the host/guest interface exchanges only strings).
  it.concurrent(
    "ends a run allocating `new Array(1e9).fill(0)`: MEMORY_LIMIT, or (known limitation) an aborted process",
    async () => {
      await expectBombEndsRun(`export default async function main() {
  const a = new Array(1e9).fill(0);
  return a.length;
}`);
    },
  );

  it.concurrent(
    "ends a run growing a Set without bound: MEMORY_LIMIT, or (known limitation) an aborted process",
    async () => {
      await expectBombEndsRun(`export default async function main() {
  const seen = new Set<number>();
  for (let i = 0; ; i++) seen.add(i);
}`);
    },
  );

  it.concurrent(
    "ends a run growing an object's keys without bound: MEMORY_LIMIT, or (known limitation) an aborted process",
    async () => {
      await expectBombEndsRun(`export default async function main() {
  const index: Record<string, number> = {};
  for (let i = 0; ; i++) index["k" + i] = i;
}`);
    },
  );
});

// ─── 3. Escapes ─────────────────────────────────────────────────────────────────────────────────

describe("escape attempts", () => {
  const sb = sandbox();

  it("gives no escape hatch any access to the host", async () => {
    const result = await run(
      sb,
      `import { tools } from "rewind";
const topLevel = {
  host: typeof (globalThis as any).__rewind_host,
};
async function probe(f: () => unknown): Promise<string> {
  try {
    const value = await f();
    return "value " + (value === undefined ? "undefined" : typeof value === "string" ? value : typeof value);
  } catch (error: any) {
    return "threw " + error.name + ": " + error.message;
  }
}
export default async function main(input: { fs: string; cp: string }) {
  const g = globalThis as any;
  const echoed: any = await tools.echo({ a: 1 });
  return {
    topLevel,
    objectCtor: await probe(() => ({}).constructor.constructor("return process")()),
    globalCtor: await probe(() => g.constructor.constructor("return typeof process")()),
    functionThis: await probe(() => Function("return this")().process),
    functionThisIsGlobal: Function("return this")() === globalThis,
    asyncCtor: await probe(() => (async () => {}).constructor("return process")()),
    generatorCtor: await probe(() => (function* () {}).constructor("return process")().next()),
    resultCtor: await probe(() => echoed.constructor.constructor("return typeof process")()),
    resultProtoIsOwn: Object.getPrototypeOf(echoed) === Object.prototype,
    globalRequire: await probe(() => g.require),
    typeofProcess: typeof process,
    typeofGlobalRequire: typeof g["req" + "uire"],
    bundledRequire: await probe(() => require(input.fs)),
    dynamicImport: await probe(() => import(input.fs)),
    dynamicImportNode: await probe(() => import(input.cp)),
    host: typeof g.__rewind_host,
    register: typeof g.__rewind_register,
    module: typeof g.__rewind_module,
    buffer: typeof g.Buffer,
    nodeGlobal: typeof g.global,
    ivm: typeof g.ivm,
    evalProcess: await probe(() => (0, eval)("typeof process")),
  };
}`,
      { input: { fs: "fs", cp: "node:child_process" } },
    );
    expect(result.error).toBeUndefined();
    expect(result.status).toBe("completed");
    expect(result.result).toEqual({
      topLevel: { host: "undefined" }, // deleted before the script's module is evaluated
      objectCtor: "threw ReferenceError: process is not defined",
      globalCtor: "value undefined",
      functionThis: "value undefined",
      functionThisIsGlobal: true,
      asyncCtor: "threw ReferenceError: process is not defined",
      generatorCtor: "threw ReferenceError: process is not defined",
      resultCtor: "value undefined",
      resultProtoIsOwn: true,
      globalRequire: "value undefined",
      typeofProcess: "undefined",
      typeofGlobalRequire: "undefined",
      // esbuild's bundled require shim: it can load nothing.
      bundledRequire: 'threw Error: Dynamic require of "fs" is not supported',
      dynamicImport: "threw Error: Not supported",
      dynamicImportNode: "threw Error: Not supported",
      host: "undefined",
      register: "undefined",
      module: "undefined",
      buffer: "undefined",
      nodeGlobal: "undefined",
      ivm: "undefined",
      evalProcess: "value undefined",
    });
    await expectHealthy(sb);
  });

  it.each([
    {
      what: "the Function constructor",
      code: `({}).constructor.constructor("return process")()`,
      name: "ReferenceError",
      message: "process is not defined",
    },
    {
      what: "the AsyncFunction constructor",
      code: `await (async () => {}).constructor("return process.env")()`,
      name: "ReferenceError",
      message: "process is not defined",
    },
    {
      what: "require",
      code: `(globalThis as any).require("child_process")`,
      name: "TypeError",
      message: "globalThis.require is not a function",
    },
  ])(
    "fails the run with SCRIPT_ERROR when $what is used uncaught",
    async ({ code, name, message }) => {
      const result = await run(sb, `export default async function main() {\n  return ${code};\n}`);
      expect(result.status).toBe("failed");
      expect(result.error).toMatchObject({ name, message, code: "SCRIPT_ERROR" });
      expect(result.error!.stack).toContain("x.ts:2:");
      await expectHealthy(sb);
    },
  );

  it("refuses to compile a script importing a Node built-in, statically or dynamically", async () => {
    for (const source of [
      `import fs from "fs";\nexport default async () => fs.readFileSync("/etc/passwd", "utf8");`,
      `export default async () => (await import("node:child_process")).execSync("id");`,
    ]) {
      await expect(compileScript({ source, filename: "x.ts" })).rejects.toMatchObject({
        code: "COMPILE_ERROR",
        message: expect.stringMatching(/no Node built-ins/),
      });
    }
  });

  it("leaves no isolated-vm object reachable from anything the script can see", async () => {
    const result = await run(
      sb,
      `import { tools, sleep, waitForSignal } from "rewind";
export default async function main() {
  const echoed = await tools.echo({ a: 1 });
  let toolError: unknown;
  try { await tools.fail(); } catch (error) { toolError = error; }
  const forbidden = ["Reference", "ExternalCopy", "Isolate", "Context", "Callback", "NativeModule"];
  const forbiddenKeys = ["ivm", "_ivm", "process", "require", "Buffer", "__rewind_host", "__rewind_register", "__rewind_module"];
  const found: string[] = [];
  const seen = new Set<unknown>();
  const queue: [unknown, string][] = [
    [globalThis, "globalThis"], [tools, "tools"], [sleep, "sleep"], [waitForSignal, "waitForSignal"],
    [echoed, "echoed"], [toolError, "toolError"],
  ];
  let visited = 0;
  let globalNames = 0;
  while (queue.length > 0) {
    const [value, where] = queue.shift()!;
    if ((typeof value !== "object" && typeof value !== "function") || value === null) continue;
    if (seen.has(value)) continue;
    seen.add(value);
    visited++;
    let ctorName: unknown;
    try {
      const d = Object.getOwnPropertyDescriptor(value, "constructor") ??
        Object.getOwnPropertyDescriptor(Object.getPrototypeOf(value) ?? {}, "constructor");
      ctorName = (d?.value as { name?: unknown } | undefined)?.name;
    } catch { ctorName = undefined; }
    const ownName = typeof value === "function" ? (value as { name?: unknown }).name : undefined;
    if (forbidden.includes(ctorName as string) || forbidden.includes(ownName as string)) {
      found.push(where + " (" + String(ctorName ?? ownName) + ")");
    }
    queue.push([Object.getPrototypeOf(value), where + ".__proto__"]);
    for (const key of Reflect.ownKeys(value)) {
      const name = String(key);
      if (value === globalThis) {
        globalNames++;
        if (forbiddenKeys.includes(name)) found.push("globalThis." + name);
      }
      const d = Object.getOwnPropertyDescriptor(value, key)!;
      // Getters are not invoked: their functions are walked instead.
      for (const [part, v] of [["", d.value], [":get", d.get], [":set", d.set]] as const) {
        if (v !== undefined) queue.push([v, where + "." + name + part]);
      }
    }
  }
  return { found, visited, globalNames };
}`,
    );
    expect(result.error).toBeUndefined();
    expect(result.status).toBe("completed");
    const { found, visited, globalNames } = result.result as {
      found: string[];
      visited: number;
      globalNames: number;
    };
    expect(found).toEqual([]);
    // The walk really walked: every built-in, its prototype and its methods.
    expect(globalNames).toBeGreaterThan(50);
    expect(visited).toBeGreaterThan(500);
  });
});

// ─── 4. Secrets ─────────────────────────────────────────────────────────────────────────────────

describe("host secrets", () => {
  const sb = sandbox();
  const HUNT = `import { tools } from "rewind";
export default async function main(input: { canary: string }) {
  const g = globalThis as any;
  const loot: Record<string, unknown> = { canary: input.canary };
  const grab = (name: string, f: () => unknown) => {
    try { loot[name] = f(); } catch (error: any) { loot[name] = "threw " + String(error && error.stack || error); }
  };
  grab("process", () => typeof process !== "undefined" ? (process as any).env : "no process");
  grab("globalEnv", () => g.process?.env ?? g.env ?? g.ENV);
  grab("functionThis", () => Function("return this")().process?.env);
  grab("ctor", () => ({}).constructor.constructor("return process.env")());
  grab("globalNames", () => Reflect.ownKeys(globalThis).map(String));
  grab("globalValues", () => {
    const out: Record<string, string> = {};
    for (const k of Object.getOwnPropertyNames(globalThis)) {
      try { out[k] = String(g[k]).slice(0, 200); } catch (e) { out[k] = "!"; }
    }
    return out;
  });
  grab("stack", () => new Error("where am I").stack);
  const frames = (label: string) => grab(label, () => {
    const E = Error as any;
    const saved = E.prepareStackTrace;
    E.stackTraceLimit = Infinity;
    E.prepareStackTrace = (_e: unknown, callSites: any[]) => callSites.map((s) => {
      let fn = "";
      try { fn = String(s.getFunction()).slice(0, 300); } catch {}
      let self = "";
      try { self = String(s.getThis()); } catch {}
      return [s.getFileName(), s.getFunctionName(), s.getTypeName(), s.getEvalOrigin(), s.isNative(), fn, self].join(" | ");
    });
    try { return new Error("frames").stack; } finally { E.prepareStackTrace = saved; }
  });
  frames("framesAtStart");
  const echoed = await tools.echo({ loot: "before" });
  frames("framesAfterToolResult");
  try { await tools.fail(); } catch (error: any) {
    loot.toolError = { name: error.name, message: error.message, code: error.code, stack: error.stack, keys: Object.getOwnPropertyNames(error) };
  }
  frames("framesAfterToolError");
  grab("resultCtor", () => (echoed as any).constructor.constructor("try { return JSON.stringify(process.env) } catch (e) { return String(e) }")());
  grab("performance", () => JSON.stringify(g.performance));
  grab("crypto", () => Object.keys(g.crypto));
  console.log(JSON.stringify(loot));
  console.error(JSON.stringify(loot));
  await tools.echo({ loot });
  return loot;
}`;

  it("never lets a secret in the host's environment reach the journal", async () => {
    const secret = `s3cr3t-${randomBytes(16).toString("hex")}`;
    const canary = `canary-${randomBytes(16).toString("hex")}`;
    const saved = process.env.REWIND_TEST_SECRET;
    process.env.REWIND_TEST_SECRET = secret;
    try {
      const result = await run(sb, HUNT, { input: { canary } });
      expect(result.error).toBeUndefined();
      expect(result.status).toBe("completed");
      const journal = JSON.stringify(result.journal);
      // Control: what the script did get hold of reached the journal, in output, args and result.
      expect(kinds(result.journal)).toEqual([
        "run.started",
        "call",
        "call.result",
        "call",
        "call.error",
        "output",
        "output",
        "call",
        "call.result",
        "run.completed",
      ]);
      expect(journal.split(canary).length - 1).toBeGreaterThanOrEqual(5);
      expect((result.result as { process: unknown }).process).toBe("no process");
      // The secret, and anything else of the host, did not.
      expect(journal).not.toContain(secret);
      expect(journal).not.toContain("REWIND_TEST_SECRET");
      expect(journal).not.toContain(process.cwd());
      expect(journal).not.toContain("node:internal");
    } finally {
      if (saved === undefined) delete process.env.REWIND_TEST_SECRET;
      else process.env.REWIND_TEST_SECRET = saved;
    }
  });

  it("keeps the secret out of a failed run's error and stack too", async () => {
    const secret = `s3cr3t-${randomBytes(16).toString("hex")}`;
    const saved = process.env.REWIND_TEST_SECRET;
    process.env.REWIND_TEST_SECRET = secret;
    try {
      const result = await run(
        sb,
        HUNT.replace("return loot;", "throw new Error(JSON.stringify(loot));"),
        { input: { canary: "c" } },
      );
      expect(result.status).toBe("failed");
      expect(result.error).toMatchObject({ name: "Error", code: "SCRIPT_ERROR" });
      expect(result.error!.message).toContain('"canary":"c"');
      expect(JSON.stringify(result.journal)).not.toContain(secret);
    } finally {
      if (saved === undefined) delete process.env.REWIND_TEST_SECRET;
      else process.env.REWIND_TEST_SECRET = saved;
    }
  });
});

// ─── 5. Tampering with built-ins ────────────────────────────────────────────────────────────────

describe("tampering with the built-ins the runtime uses", () => {
  const sb = sandbox();
  const EXPECTED = { value: 7, list: 3, echoed: { a: [1, 2] } };
  const script = (tamper: string) => `import { tools } from "rewind";
export default async function main() {
  ${tamper}
  const r: any = await tools.echo({ a: [1, 2] });
  setTimeout(() => {}, 10);
  console.log("after tampering");
  return { value: r.value, list: r.list.length, echoed: r.echoed };
}`;

  const cases: { what: string; tamper: string; marker?: RegExp }[] = [
    {
      what: "an Object.prototype accessor named value",
      tamper: `Object.defineProperty(Object.prototype, "value", {
    set() { throw new Error("tampered value setter"); },
    get() { return "hijacked"; },
    configurable: true,
  });`,
      marker: /tampered value/,
    },
    {
      what: "Object.prototype get/set/writable (ambiguous property descriptors)",
      tamper: `for (const k of ["get", "set", "writable", "enumerable"]) (Object.prototype as any)[k] = () => { throw new Error("tampered " + k); };`,
      marker: /tampered/,
    },
    {
      what: "Array.prototype.push",
      tamper: `Array.prototype.push = function () { throw new Error("tampered push"); };`,
      marker: /tampered push/,
    },
    {
      what: "JSON.parse and JSON.stringify",
      tamper: `JSON.parse = () => ({ evil: true }); JSON.stringify = () => '"evil"';`,
    },
    {
      what: "Promise.prototype.then",
      tamper: `(Promise.prototype as any).then = function () { throw new Error("tampered then"); };`,
      marker: /tampered then/,
    },
    {
      what: "Map.prototype.get/set",
      tamper: `Map.prototype.get = function () { throw new Error("tampered map"); };
  Map.prototype.set = function () { throw new Error("tampered map"); };`,
      marker: /tampered map/,
    },
    {
      what: "Function.prototype.call/apply/bind",
      tamper: `for (const k of ["call", "apply", "bind"] as const) (Function.prototype as any)[k] = () => { throw new Error("tampered " + k); };`,
      marker: /tampered/,
    },
    {
      what: "Reflect.apply",
      tamper: `(Reflect as any).apply = () => { throw new Error("tampered reflect"); };`,
      marker: /tampered reflect/,
    },
    {
      what: "String.prototype methods",
      tamper: `String.prototype.replace = function () { throw new Error("tampered replace"); };
  String.prototype.split = function () { throw new Error("tampered split"); };`,
      marker: /tampered/,
    },
  ];

  it.each(cases)(
    "survives a script replacing $what: its run completes or fails on its own, and the next run is clean",
    async ({ tamper, marker }) => {
      const result = await run(sb, script(tamper));
      if (result.status === "completed") {
        expect(result.result).toEqual(EXPECTED);
        const call = result.journal.find((e) => e.kind === "call");
        expect(call).toMatchObject({ name: "echo", args: { a: [1, 2] } });
        expect(kinds(result.journal)).toContain("output");
      } else {
        // A clear failure of that run alone, naming what the script broke.
        expect(result.status).toBe("failed");
        expect(result.journal.at(-1)?.kind).toBe("run.failed");
        expect(marker).toBeDefined();
        expect(result.error!.message).toMatch(marker!);
      }
      expect(sb.liveRuns).toBe(0);
      await expectHealthy(sb);
    },
  );

  it("delivers tool results and errors as the sandbox's own objects", async () => {
    const result = await run(
      sb,
      `import { tools } from "rewind";
export default async function main() {
  const r: any = await tools.echo({ a: 1 });
  let e: any;
  try { await tools.fail(); } catch (error) { e = error; }
  return [
    r.constructor.constructor("return typeof process")(),
    r.constructor === Object,
    r.list instanceof Array,
    Object.getPrototypeOf(r.echoed) === Object.prototype,
    e instanceof Error,
    e.constructor.constructor("return typeof process")(),
    e.message,
    e.code,
  ];
}`,
    );
    expect(result.status).toBe("completed");
    expect(result.result).toEqual([
      "undefined",
      true,
      true,
      true,
      true,
      "undefined",
      "the tool refused",
      "TOOL_ERROR",
    ]);
  });

  it("does not let an Array.prototype index setter swallow the run's commands", async () => {
    const result = await run(
      sb,
      script(
        `Object.defineProperty(Array.prototype, "0", { set() {}, get() { return undefined; }, configurable: true });`,
      ),
    );
    expect(["completed", "failed"]).toContain(result.status);
  });

  it("gives a script's Array.prototype setter no way into the runtime's channel to the host (async mode)", async () => {
    const spinInCollect = script(
      `for (let i = 0; i < 16; i++) {
    Object.defineProperty(Array.prototype, String(i), {
      configurable: true,
      set(v: unknown) {
        if (String(v).includes('"t":"done"')) for (;;) {}
        Object.defineProperty(this, String(i), { value: v, writable: true, enumerable: true, configurable: true });
      },
    });
  }`,
    );
    const child = await inChild(
      [spinInCollect, `export default async function main() { return 42; }`],
      { cpuLimitMs: CPU_LIMIT_MS, mode: "async" },
      4_000,
    );
    // The runtime keeps its commands in a string: the setter is never called by it.
    expect(child.runs).toEqual([
      expect.objectContaining({ status: "completed" }),
      { status: "completed", result: 42 },
    ]);
    expect(child.code).toBe(0);
  });

  it("fails only the run that replaced the global Promise; the next run in the isolate is clean", async () => {
    const own = sandbox();
    const result = await run(
      own,
      script(`const g = globalThis as any;
  const E = Error;
  g.Promise = function () { throw new E("planted by another run"); };`),
    );
    // The runtime uses the Promise it captured, so the run is unharmed; either way, the next is.
    expect(["completed", "failed"]).toContain(result.status);
    await expectHealthy(own);
  });

  it("does not let a run plant its unhandled rejection in a neighbour's activation", async () => {
    const own = sandbox();
    const neighbourScript = await compileScript({
      source: `import { tools } from "rewind";
export default async function main() { await tools.echo({}); return "neighbour done"; }`,
      filename: "neighbour.ts",
    });
    const neighbour = await own.instantiate(neighbourScript, { seed: SEED, startAt: 0 });
    expect((await neighbour.start(null)).map((c) => c.type)).toEqual(["call"]);
    const hostile = await run(
      own,
      `export default async function main() {
  (Reflect as any).apply = () => { throw new Error("runtime broken"); };
  throw new Error("message planted by another run");
}`,
    );
    expect(hostile.status).toBe("failed");
    const commands = await neighbour.deliver({ type: "call.result", id: 1, at: 1, result: {} });
    neighbour.dispose();
    expect(commands).toEqual([{ type: "complete", result: "neighbour done" }]);
  });

  it("keeps the runtime's own calls invisible to a script's Reflect.apply", async () => {
    const result = await run(
      sb,
      `import { tools } from "rewind";
export default async function main() {
  const original = Reflect.apply;
  const seen: string[] = [];
  (Reflect as any).apply = (f: any, self: any, args: any[]) => {
    seen.push(String(f.name));
    return original(f, self, args);
  };
  await tools.echo({});
  return seen;
}`,
    );
    expect(result.status).toBe("completed");
    expect(result.result).toEqual([]);
  });
});

// ─── 6. Value size ──────────────────────────────────────────────────────────────────────────────

describe("value size limits", () => {
  const sb = sandbox({ maxValueBytes: 1024 });
  // {"s":"aaa…"}: 2000 characters plus 8 bytes of JSON around them.
  const ARGS_BYTES = 2008;

  it("throws a catchable error naming the limit and the size when a tool's arguments are too large", async () => {
    const result = await run(
      sb,
      `import { tools } from "rewind";
export default async function main() {
  try {
    await tools.echo({ s: "a".repeat(2000) });
    return "sent";
  } catch (error: any) {
    return { name: error.name, message: error.message, code: error.code };
  }
}`,
    );
    expect(result.status).toBe("completed");
    const caught = result.result as { name: string; message: string; code: string };
    expect(caught.name).toBe("RangeError");
    expect(caught.code).toBe("PAYLOAD_TOO_LARGE");
    expect(caught.message).toContain("tools.echo()");
    expect(caught.message).toContain(`${ARGS_BYTES} bytes`);
    expect(caught.message).toContain("limit of 1024 bytes");
    // Nothing left the sandbox: no call was journaled.
    expect(kinds(result.journal)).toEqual(["run.started", "run.completed"]);
  });

  it("fails the run when the oversized call is not caught", async () => {
    const result = await run(
      sb,
      `import { tools } from "rewind";
export default async function main() {
  await tools.echo({ s: "a".repeat(2000) });
}`,
    );
    expect(result.status).toBe("failed");
    expect(result.error).toMatchObject({ name: "RangeError", code: "PAYLOAD_TOO_LARGE" });
    expect(result.error!.message).toContain(`${ARGS_BYTES} bytes`);
    expect(result.error!.message).toContain("limit of 1024 bytes");
    expect(result.error!.stack).toContain("x.ts:3:");
    expect(kinds(result.journal)).toEqual(["run.started", "run.failed"]);
    await expectHealthy(sb);
  });

  it("fails a run whose result is too large with PAYLOAD_TOO_LARGE", async () => {
    const result = await run(
      sb,
      `export default async function main() { return "b".repeat(2000); }`,
    );
    expect(result.status).toBe("failed");
    expect(result.error).toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
    // "b" × 2000 as JSON: 2000 characters and two quotes.
    expect(result.error!.message).toContain("The run's result is 2002 bytes");
    expect(result.error!.message).toContain("limit of 1024 bytes");
    expect(kinds(result.journal)).toEqual(["run.started", "run.failed"]);
  });

  it("has the host check again: the engine's limit stops a value the guest let through", async () => {
    const lax = sandbox({ maxValueBytes: 16 * 1024 * 1024 });
    const script = await compileScript({
      source: `export default async function main() { return "c".repeat(5000); }`,
      filename: "x.ts",
    });
    const instance = await lax.instantiate(script, { seed: SEED, startAt: 0 });
    const started = {
      seq: 1,
      kind: "run.started" as const,
      at: 0,
      runId: "run_backstop",
      scriptHash: script.hash,
      input: null,
      seed: SEED,
      epoch: 1,
      toolset: "none",
      namespace: "default",
    };
    const { engine, entries } = await RunEngine.resume(instance, [started], {
      maxValueBytes: 1024,
    });
    instance.dispose();
    expect(engine.outcome).toBe("failed");
    expect(entries.at(-1)).toMatchObject({
      kind: "run.failed",
      error: { name: "RewindError", code: "PAYLOAD_TOO_LARGE" },
    });
    const message = (entries.at(-1) as { error: { message: string } }).error.message;
    expect(message).toContain("The run's result is 5002 bytes");
    expect(message).toContain("limit of 1024 bytes");
  });

  it("applies the Sandbox's maxValueBytes to tool results coming in", async () => {
    const result = await run(
      sb,
      `import { tools } from "rewind";
export default async function main() {
  try { return (await tools.big()).length; } catch (error: any) { return error.code; }
}`,
    );
    expect(result.journal.find((e) => e.kind === "call.error")).toMatchObject({
      error: { code: "PAYLOAD_TOO_LARGE" },
    });
    expect(result.result).toBe("PAYLOAD_TOO_LARGE");
  });
});

// ─── 7. Errors ──────────────────────────────────────────────────────────────────────────────────

describe("script errors", () => {
  const sb = sandbox();
  const THROWS = `interface Order {
  id: string;
  cents: number;
}
type Checked = Order & { ok: boolean };

function check(order: Order): Checked {
  throw new Error("boom");
}

export default async function main(input: { order: Order }): Promise<Checked> {
  const checked: Checked = check(input.order);
  return checked;
}
`;

  it("fails with SCRIPT_ERROR, the message, and a stack mapped to the TypeScript lines", async () => {
    const compiled = await compileScript({ source: THROWS, filename: "x.ts" });
    // The compiled line differs from the TypeScript one, so a correct stack proves the mapping.
    const jsLine = compiled.code.split("\n").findIndex((l) => l.includes('new Error("boom")')) + 1;
    expect(jsLine).toBeGreaterThan(0);
    expect(jsLine).not.toBe(8);

    const result = await run(sb, THROWS, { input: { order: { id: "o1", cents: 1 } } });
    expect(result.status).toBe("failed");
    expect(result.error).toMatchObject({ name: "Error", message: "boom", code: "SCRIPT_ERROR" });
    const stack = result.error!.stack!;
    expect(stack.split("\n")[0]).toBe("Error: boom");
    expect(stack).toMatch(/at check \(x\.ts:8:9\)/);
    expect(stack).toMatch(/at main \(x\.ts:12:28\)/);
    expect(stack).not.toContain("rewind-script.js");
    expect(stack).not.toContain("rewind-runtime.js");
    expect(kinds(result.journal)).toEqual(["run.started", "run.failed"]);
  });

  it("fails with SCRIPT_ERROR when a script throws a non-Error value", async () => {
    const result = await run(sb, `export default async function main() { throw { reason: 42 }; }`);
    expect(result.status).toBe("failed");
    expect(result.error).toMatchObject({
      name: "Error",
      code: "SCRIPT_ERROR",
      message: 'Uncaught {"reason":42}',
    });
  });

  it("cannot pose as a platform verdict by setting its own error code", async () => {
    const result = await run(
      sb,
      `export default async function main() {
  throw Object.assign(new Error("I am the platform"), { code: "CPU_LIMIT" });
}`,
    );
    expect(result.error).toMatchObject({ message: "I am the platform", code: "SCRIPT_ERROR" });
  });

  it("fails an unhandled rejection with SCRIPT_ERROR and a mapped stack", async () => {
    const result = await run(
      sb,
      `export default async function main() {
  const forgotten: Promise<void> = Promise.reject(new Error("nobody awaited me"));
  return 1;
}`,
    );
    expect(result.status).toBe("failed");
    expect(result.error).toMatchObject({
      name: "Error",
      message: "nobody awaited me",
      code: "SCRIPT_ERROR",
    });
    expect(result.error!.stack).toContain("x.ts:2:");
  });

  it("fails a top-level throw with SCRIPT_ERROR and a source-mapped stack", async () => {
    const result = await run(
      sb,
      `const limit: number = 1;\nthrow new Error("top " + limit);\nexport default async function main() { return 1; }`,
    );
    expect(result.status).toBe("failed");
    expect(result.error).toMatchObject({ name: "Error", message: "top 1", code: "SCRIPT_ERROR" });
    expect(result.error!.stack).toContain("x.ts:2:7");
  });
});
