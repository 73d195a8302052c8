import { afterAll, describe, expect, it } from "vitest";
import { compileScript } from "./compiler.js";
import { LiveSliceExceeded, Sandbox } from "./host.js";

const SEED = "00".repeat(32);
const sandbox = new Sandbox();
afterAll(() => sandbox.dispose());

async function instance(source: string, startAt = Date.UTC(2025, 0, 1)) {
  const script = await compileScript({ source, filename: "test.ts" });
  return sandbox.instantiate(script, { seed: SEED, startAt });
}

describe("sandbox host", () => {
  it("runs a script's default export and collects its calls with callsites", async () => {
    const run = await instance(`import { tools } from "rewind";
export default async function main(input: { n: number }) {
  const a = await tools.add({ x: input.n, y: 1 });
  return { a };
}`);
    const first = await run.start({ n: 41 });
    expect(first).toEqual([
      { type: "call", id: 1, name: "add", args: { x: 41, y: 1 }, callsite: "test.ts:3:25" },
    ]);
    const second = await run.deliver({ type: "call.result", id: 1, at: 5, result: 42 });
    expect(second).toEqual([{ type: "complete", result: { a: 42 } }]);
    run.dispose();
  });

  it("keeps Date, Math.random and crypto deterministic", async () => {
    const source = `export default async function main() {
  class D extends Date {}
  return [Date.now(), new Date().toISOString(), new D(0).getTime(), new D() instanceof Date,
    Date.parse("2020-01-01T00:00:00Z"), new Date(2024, 0, 1).getTime() === Date.UTC(2024, 0, 1),
    Math.random(), crypto.randomUUID(), Array.from(crypto.getRandomValues(new Uint8Array(4))), typeof Date()];
}`;
    const a = await (await instance(source)).start(null);
    const b = await (await instance(source)).start(null);
    expect(a).toEqual(b);
    const result = (a[0] as { result: unknown[] }).result;
    expect(result.slice(0, 6)).toEqual([
      Date.UTC(2025, 0, 1),
      "2025-01-01T00:00:00.000Z",
      0,
      true,
      1577836800000,
      true,
    ]);
    expect(result[7]).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(result[9]).toBe("string");
  });

  it("pins the locale and time zone and provides the encoding globals", async () => {
    const run = await instance(`export default async function main() {
  const bytes = new TextEncoder().encode("héllo €😀");
  return [new Intl.NumberFormat().resolvedOptions().locale, (1234.5).toLocaleString(), new Date(0).toLocaleString(),
    Intl.DateTimeFormat().resolvedOptions().timeZone, "a".localeCompare("b"), new Date(0).getHours(),
    Array.from(bytes).length, new TextDecoder().decode(bytes), btoa("hi there"), atob(btoa("hi there")),
    new Intl.NumberFormat("de-DE").format(1234.5)];
}`);
    const [done] = await run.start(null);
    expect(done).toEqual({
      type: "complete",
      result: [
        "en-US",
        "1,234.5",
        "1/1/1970, 12:00:00 AM",
        "UTC",
        -1,
        0,
        14,
        "héllo €😀",
        "aGkgdGhlcmU=",
        "hi there",
        "1.234,5",
      ],
    });
  });

  it("hides the host's gc even when the host exposes it", async () => {
    expect(typeof (globalThis as { gc?: unknown }).gc).toBe("function"); // vitest runs with --expose-gc
    const run = await instance("export default async () => [typeof gc, typeof globalThis.gc];");
    expect(await run.start(null)).toEqual([
      { type: "complete", result: ["undefined", "undefined"] },
    ]);
  });

  it("fails a runaway loop with CPU_LIMIT and keeps the host serving", async () => {
    const slow = new Sandbox({ cpuLimitMs: 200, mode: "async" });
    const script = await compileScript({
      source: "export default async () => { while (true) {} }",
      filename: "loop.ts",
    });
    const run = await slow.instantiate(script, { seed: SEED, startAt: 0 });
    let ticks = 0;
    const interval = setInterval(() => ticks++, 10);
    const commands = await run.start(null);
    clearInterval(interval);
    expect(commands).toEqual([
      { type: "fail", error: expect.objectContaining({ code: "CPU_LIMIT" }) },
    ]);
    expect(ticks).toBeGreaterThan(5);
    slow.dispose();
  });

  it("maps a thrown error's stack to the TypeScript source", async () => {
    const run = await instance(`type T = { a: number };
export default async function main() {
  const t: T = { a: 1 };
  throw new Error("boom " + t.a);
}`);
    const [done] = await run.start(null);
    expect(done).toMatchObject({
      type: "fail",
      error: { name: "Error", message: "boom 1", code: "SCRIPT_ERROR" },
    });
    expect((done as { error: { stack: string } }).error.stack).toContain("test.ts:4:9");
  });

  it("keeps an isolate until runs still starting on it are in, when many start at once", async () => {
    // An isolate that stops admitting runs is disposed when its last run leaves. Runs admitted
    // but still making their context count too: retiring the isolate under them failed them with
    // "Isolate is disposed" (and could crash the process).
    const busy = new Sandbox({ mode: "async", runsPerIsolate: 4 });
    const script = await compileScript({
      source: `import { tools } from "rewind";
export default async function main(input: { i: number }) { return await tools.echo(input); }`,
      filename: "echo.ts",
    });
    let next = 0;
    const results: unknown[] = [];
    const lane = async () => {
      while (next < 200) {
        const i = next++;
        const run = await busy.instantiate(script, { seed: SEED, startAt: 0 });
        await run.start({ i });
        const [done] = await run.deliver({ type: "call.result", id: 1, at: 1, result: i });
        results[i] = done;
        run.dispose();
      }
    };
    await Promise.all(Array.from({ length: 16 }, lane));
    expect(results).toHaveLength(200);
    results.forEach((done, i) => expect(done).toEqual({ type: "complete", result: i }));
    expect(busy.liveRuns).toBe(0);
    busy.dispose();
  });

  it("runs a script's top level in a sync slice, and says so when it outruns the slice", async () => {
    const sliced = new Sandbox({ mode: "async", liveSliceMs: 5 });
    const heavy = await compileScript({
      source: `let x = 0;
for (let i = 0; i < 30_000_000; i++) x = (x * 31 + i) % 1_000_003;
export default async () => x;`,
      filename: "heavy.ts",
    });
    const run = await sliced.instantiate(heavy, { seed: SEED, startAt: 0, liveSlices: true });
    await expect(run.start(null)).rejects.toBeInstanceOf(LiveSliceExceeded);
    // Async (no slices), the same top level runs to its end.
    const again = await sliced.instantiate(heavy, { seed: SEED, startAt: 0 });
    expect(await again.start(null)).toEqual([{ type: "complete", result: expect.any(Number) }]);
    again.dispose();
    sliced.dispose();
  });
});
