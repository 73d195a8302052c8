/**
 * The ledger of memory outside the heaps: growth between two readings is charged to the run that
 * executed in between, never to a neighbour. Node Buffers stand in for WebAssembly memories (both
 * are resident and outside any heap the estimate subtracts).
 */
import { beforeEach, describe, expect, it } from "vitest";
import { ExternalMemory } from "./external-memory.js";

const MIB = 1024 * 1024;
const LIMIT = 64 * MIB;

/** An activation of `run` long enough to be read after, holding `mib` MiB touched. */
function activation(memory: ExternalMemory, run: object, held: Buffer[], mib: number) {
  memory.beforeActivation(run);
  const startedAt = performance.now() - 5;
  if (mib > 0) held.push(Buffer.alloc(mib * MIB, 1));
  return memory.afterActivation(run, startedAt);
}

describe("ExternalMemory", () => {
  // The Buffers an earlier case let go are freed now (their backing stores on a background
  // thread, after the collection), not in the middle of the next case.
  beforeEach(async () => {
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, 200));
  });

  it("charges each run its own growth, and fails only the one past its limit", () => {
    const memory = new ExternalMemory(
      LIMIT,
      () => 0,
      () => 3,
    );
    memory.calibrate();
    const [a, b, c] = [{}, {}, {}];
    const held: Buffer[] = [];
    // Together 150 MiB, more than one run's limit: no one is over its own.
    expect(activation(memory, a, held, 50)).toBeUndefined();
    expect(activation(memory, b, held, 50)).toBeUndefined();
    expect(activation(memory, c, held, 50)).toBeUndefined();
    expect(activation(memory, a, held, 0)).toBeUndefined();
    // b grows past its own limit: it fails, naming about its own 80 MiB.
    const verdict = activation(memory, b, held, 30);
    expect(verdict?.ceiling).toBe(0);
    expect(verdict!.bytes).toBeGreaterThan(76 * MIB);
    expect(verdict!.bytes).toBeLessThan(90 * MIB);
    expect(memory.leave(a)).toBeGreaterThan(46 * MIB);
    held.length = 0;
  });

  it("charges a run's short activations to it, read as another run starts", () => {
    const memory = new ExternalMemory(
      LIMIT,
      () => 0,
      () => 2,
    );
    memory.calibrate();
    const [a, b] = [{}, {}];
    const held: Buffer[] = [];
    expect(activation(memory, b, held, 0)).toBeUndefined(); // a reading: the next is 100 ms off
    memory.beforeActivation(a);
    held.push(Buffer.alloc(8 * MIB, 1));
    expect(memory.afterActivation(a, performance.now())).toBeUndefined(); // short: not read yet
    expect(memory.chargedBytes).toBeLessThan(2 * MIB);
    memory.beforeActivation(b); // a's activation read now
    expect(memory.chargedBytes).toBeGreaterThan(6 * MIB);
    expect(memory.afterActivation(b, performance.now() - 5)).toBeUndefined();
    expect(memory.leave(b)).toBeLessThan(2 * MIB);
    expect(memory.leave(a)).toBeGreaterThan(6 * MIB);
    held.length = 0;
  });

  it("fails a run that grows while the process is over its ceiling", () => {
    const memory = new ExternalMemory(
      LIMIT,
      () => 0,
      () => 1,
    );
    memory.calibrate();
    const [a, b] = [{}, {}];
    const held: Buffer[] = [];
    expect(activation(memory, a, held, 40)).toBeUndefined();
    memory.leave(a); // its memory not freed (a released run's, not yet collected)
    expect(memory.unownedBytes).toBeGreaterThan(36 * MIB); // the host disposes its isolate then
    const verdict = activation(memory, b, held, 40);
    expect(verdict?.ceiling).toBe(LIMIT);
    expect(verdict!.bytes).toBeGreaterThan(LIMIT);
    held.length = 0;
  });
});
