/**
 * The deviations from standard JavaScript that the conformance suite found in epoch 1's guest
 * runtime (issue 12), each fixed in the standard runtime of epochs 2-4 and kept in epoch 1 (its
 * runs replay as recorded). Every case asserts both: the standard runtime computes what a plain
 * V8 context computes, epoch 1's still computes what it always did.
 */
import { afterAll, describe, expect, it } from "vitest";
import { Sandbox } from "../src/host.js";
import { NODE_MAJOR, STANDARD_EPOCH, probe } from "./sandbox-probe.js";

const sandbox = new Sandbox();
afterAll(() => sandbox.dispose());

interface Case {
  name: string;
  expression: string;
  /** What standard JavaScript (a plain V8 context) computes. */
  standard: unknown;
  /** What epoch 1 computes instead; undefined where it deviates only on some runtimes. */
  epoch1?: unknown;
}

const CASES: Case[] = [
  {
    name: "Date.parse and Date.UTC are own properties of Date",
    expression: `[Object.hasOwn(Date, "parse"), Object.hasOwn(Date, "UTC")]`,
    standard: [true, true],
    epoch1: [false, false],
  },
  {
    name: "Date's prototype is Function.prototype",
    expression: `Object.getPrototypeOf(Date) === Function.prototype`,
    standard: true,
    epoch1: false,
  },
  {
    name: "Date is named Date and prints as native code",
    expression: `[Date.name, Function.prototype.toString.call(Date), String(Date).includes("[native code]")]`,
    standard: ["Date", "function Date() { [native code] }", true],
    epoch1: ["Date2", expect.not.stringContaining("[native code]"), false],
  },
  {
    name: "Date.now and Math.random are not constructible and have no prototype",
    expression: `[Date.now, Math.random].map((f) => { let c = true; try { new f(); } catch { c = false; } return [c, Object.hasOwn(f, "prototype"), String(f)]; })`,
    standard: [
      [false, false, "function now() { [native code] }"],
      [false, false, "function random() { [native code] }"],
    ],
    epoch1: [
      [true, true, expect.not.stringContaining("native")],
      [true, true, expect.not.stringContaining("native")],
    ],
  },
  {
    name: "the Intl constructors have length 0 and their own prototype chain",
    expression: `["Collator", "DateTimeFormat", "NumberFormat", "PluralRules", "Segmenter"].map((n) => [Intl[n].length, Object.getPrototypeOf(Intl[n]) === Function.prototype, Intl[n].name])`,
    standard: ["Collator", "DateTimeFormat", "NumberFormat", "PluralRules", "Segmenter"].map(
      (n) => [0, true, n],
    ),
    epoch1: ["Collator", "DateTimeFormat", "NumberFormat", "PluralRules", "Segmenter"].map((n) => [
      2,
      false,
      n,
    ]),
  },
  {
    name: "String.prototype.localeCompare has length 1",
    expression: `[String.prototype.localeCompare.length, "a".localeCompare("b")]`,
    standard: [1, -1],
    epoch1: [0, -1],
  },
  {
    name: "setTimeout and queueMicrotask have their names",
    expression: `[setTimeout.name, queueMicrotask.name, clearTimeout.name, clearInterval.name, setInterval.name]`,
    standard: ["setTimeout", "queueMicrotask", "clearTimeout", "clearInterval", "setInterval"],
    epoch1: ["", "", "clear", "clear", ""],
  },
  {
    name: "Math.E is the standard's",
    expression: `[typeof Math.E, Math.E, Object.getOwnPropertyDescriptor(Math, "E")]`,
    standard: [
      "number",
      Math.E,
      { value: Math.E, writable: false, enumerable: false, configurable: false },
    ],
    // Node 20's isolated-vm contexts lack it (without --no-node-snapshot); later runtimes have it.
    epoch1: NODE_MAJOR < 24 ? ["undefined", null, null] : undefined, // JSON: null
  },
];

describe("the standard runtime fixes epoch 1's deviations from standard JavaScript", () => {
  for (const c of CASES) {
    it(`${c.name} (epoch ${STANDARD_EPOCH})`, async () => {
      expect(await probe(sandbox, STANDARD_EPOCH, c.expression)).toEqual(c.standard);
    });
    it(`${c.name}: epoch 1 keeps its behaviour`, async () => {
      const epoch1 = await probe(sandbox, 1, c.expression);
      if (c.epoch1 === undefined) expect(epoch1).toEqual(c.standard);
      else expect(epoch1).toEqual(c.epoch1);
    });
  }

  it("refuses an epoch the build has no guest runtime for", async () => {
    await expect(probe(sandbox, 99, "1")).rejects.toMatchObject({
      code: "SANDBOX_ERROR",
      message: expect.stringMatching(/no guest runtime for epoch 99/),
    });
  });

  it("keeps Date on the logical clock, with subclasses and instanceof", async () => {
    const value = await probe(
      sandbox,
      STANDARD_EPOCH,
      `(() => { class D extends Date {} const d = new D(); return [Date.now(), d.getTime(), d instanceof Date, d instanceof D, new Date().constructor === Date, typeof Date(), Date() === new Date().toString(), new Date(2024, 0, 1).getTime() === Date.UTC(2024, 0, 1), performance.now()]; })()`,
    );
    const now = Date.UTC(2025, 0, 1, 12, 30);
    expect(value).toEqual([now, now, true, true, true, "string", true, true, 0]);
  });

  it("reads and writes local time at UTC", async () => {
    const value = await probe(
      sandbox,
      STANDARD_EPOCH,
      `(() => { const d = new Date(2024, 6, 1, 10, 30); d.setHours(d.getHours() + 1); return [d.toISOString(), d.getTimezoneOffset(), d.toString(), d.toDateString(), d.toTimeString(), Date.parse("2024-07-01T10:00"), Date.parse("Jul 1 2024 10:00"), Date.parse("Jul 1 2024 10:00 GMT+0200"), Date.parse("2024-07-01"), new Date("2024-07-01 10:00").getTime(), new Date(NaN).getTimezoneOffset(), String(new Date(NaN))]; })()`,
    );
    expect(value).toEqual([
      "2024-07-01T11:30:00.000Z",
      0,
      "Mon Jul 01 2024 11:30:00 GMT+0000 (Coordinated Universal Time)",
      "Mon Jul 01 2024",
      "11:30:00 GMT+0000 (Coordinated Universal Time)",
      Date.UTC(2024, 6, 1, 10),
      Date.UTC(2024, 6, 1, 10),
      Date.UTC(2024, 6, 1, 8),
      Date.UTC(2024, 6, 1),
      Date.UTC(2024, 6, 1, 10),
      null,
      "Invalid Date",
    ]);
  });
});
