/**
 * WebAssembly in the standard runtime: no SharedArrayBuffer through a shared memory, memories
 * capped at the run's memory limit, and the asynchronous compile and instantiate settle. Each
 * case also shows what epoch 1's runtime does (kept: its runs replay as recorded).
 */
import { afterAll, describe, expect, it } from "vitest";
import { Sandbox } from "../src/host.js";
import { STANDARD_EPOCH, probe } from "./sandbox-probe.js";

const MEMORY_LIMIT_MB = 64;
const MAX_PAGES = (MEMORY_LIMIT_MB * 1024 * 1024) / 65536; // 1024
const sandbox = new Sandbox({ memoryLimitMb: MEMORY_LIMIT_MB });
afterAll(() => sandbox.dispose());

const HEADER = "0x00,0x61,0x73,0x6d,0x01,0x00,0x00,0x00";
/** An empty module; one with a shared memory (1 page); one whose memory starts at 2000 pages. */
const EMPTY = `new Uint8Array([${HEADER}])`;
const SHARED = `new Uint8Array([${HEADER},0x05,0x04,0x01,0x03,0x01,0x01])`;
const HUGE = `new Uint8Array([${HEADER},0x05,0x04,0x01,0x00,0xd0,0x0f])`;
/** One that imports a shared memory: (import "env" "mem" (memory 1 1 shared)). */
const IMPORTS_SHARED = `new Uint8Array([${HEADER},0x02,0x0c,0x01,0x03,0x65,0x6e,0x76,0x03,0x6d,0x65,0x6d,0x02,0x03,0x01,0x01])`;

const attempt = (expression: string) =>
  `(async () => { try { const v = await (${expression}); return ["ok", Object.prototype.toString.call(v)]; } catch (e) { return [e.name, e.message]; } })()`;

describe(`WebAssembly in epoch ${STANDARD_EPOCH}`, () => {
  const run = (expression: string) => probe(sandbox, STANDARD_EPOCH, expression);

  it("has no shared memory, so no SharedArrayBuffer", async () => {
    expect(
      await run(attempt(`new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true })`)),
    ).toEqual(["TypeError", expect.stringMatching(/Shared WebAssembly memory is not available/)]);
    for (const bytes of [SHARED, IMPORTS_SHARED])
      expect(await run(attempt(`new WebAssembly.Module(${bytes})`))).toEqual([
        "CompileError",
        expect.stringMatching(/shared memory/),
      ]);
    expect(await run(attempt(`WebAssembly.compile(${SHARED})`))).toEqual([
      "CompileError",
      expect.stringMatching(/shared memory/),
    ]);
  });

  it("caps memories at the run's memory limit", async () => {
    expect(
      await run(attempt(`new WebAssembly.Memory({ initial: 1, maximum: ${MAX_PAGES + 1} })`)),
    ).toEqual(["RangeError", expect.stringMatching(`at most ${MAX_PAGES} pages`)]);
    expect(
      await run(
        `(() => { const m = new WebAssembly.Memory({ initial: 1 }); m.grow(${MAX_PAGES - 1}); try { m.grow(1); return "grew"; } catch (e) { return [e.name, m.buffer.byteLength / 65536]; } })()`,
      ),
    ).toEqual(["RangeError", MAX_PAGES]);
    expect(await run(attempt(`new WebAssembly.Module(${HUGE})`))).toEqual([
      "CompileError",
      expect.stringMatching(`starts at 2000 pages, more than the run's limit of ${MAX_PAGES}`),
    ]);
  });

  it("settles the asynchronous compile and instantiate", async () => {
    expect(await run(attempt(`WebAssembly.compile(${EMPTY})`))).toEqual([
      "ok",
      "[object WebAssembly.Module]",
    ]);
    expect(
      await run(
        `WebAssembly.instantiate(${EMPTY}).then(({ module, instance }) => [module instanceof WebAssembly.Module, instance instanceof WebAssembly.Instance])`,
      ),
    ).toEqual([true, true]);
    expect(
      await run(
        `WebAssembly.compile(${EMPTY}).then((m) => WebAssembly.instantiate(m)).then((i) => i instanceof WebAssembly.Instance)`,
      ),
    ).toEqual(true);
    expect(await run(attempt(`WebAssembly.instantiate(new Uint8Array([1, 2, 3]))`))).toEqual([
      "CompileError",
      expect.any(String),
    ]);
  });
});

describe("WebAssembly in epoch 1 (kept as released)", () => {
  const run = (expression: string) => probe(sandbox, 1, expression);

  it("hands out a SharedArrayBuffer through a shared memory", async () => {
    expect(
      await run(
        `Object.prototype.toString.call(new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true }).buffer)`,
      ),
    ).toBe("[object SharedArrayBuffer]");
  });

  it("never settles the asynchronous compile", async () => {
    await expect(run(`WebAssembly.compile(${EMPTY})`)).rejects.toThrow(/did not complete/);
  });
});
