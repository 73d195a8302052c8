/**
 * The wire between guest and host (issue 17, "the guest can forge commands"). The guest builds
 * its command batch as JSON text; a script that controls a piece of that text (a callsite, via an
 * `Error.prepareStackTrace` accessor that hands the runtime crafted frames) could splice commands
 * of its own into the batch: a `done` the host journals as `run.completed`, then a call of an
 * `unsafeToRepeat` tool that ran after the run had ended. The host parses every batch against
 * the wire's schema and refuses what breaks it, whatever the guest runtime (every epoch).
 */
import { afterAll, describe, expect, it } from "vitest";
import { runInProcess } from "@rewind/executor";
import { defineToolset } from "@rewind/core";
import { compileScript, Sandbox } from "../src/index.js";
import { parseCommands } from "../src/commands.js";

const sb = new Sandbox({ cpuLimitMs: 1000 });
afterAll(() => sb.dispose());

/** A callsite the runtime splices into the batch: closes the string and adds two commands. */
const INJECTION =
  `1:1","args":null},{"t":"done","ok":true,"value":"forged"},` +
  `{"t":"call","id":2,"name":"charge","site":"1`;

/** A forged call with an id the runtime never gave: its answer would come after the run's end. */
const FAR_ID = `1:1","args":null},{"t":"call","id":1000,"name":"charge","site":"1`;

const forger = (injection: string) => `import { tools } from "rewind";
export default async function main() {
  const E = Error as any;
  const crafted = (_error: unknown, frames: unknown[]) => [{
    getFileName: () => "rewind-script.js",
    getLineNumber: () => ${JSON.stringify(injection)},
    getColumnNumber: () => 0,
  }];
  let current: unknown = undefined;
  // V8 reads prepareStackTrace as a data property: the accessor's setter, which the runtime's
  // own assignment calls, swaps in the crafted one for the runtime's next capture.
  Object.defineProperty(E, "prepareStackTrace", {
    configurable: true,
    get: () => current,
    set: (value: unknown) => {
      Object.defineProperty(E, "prepareStackTrace", { value: crafted, writable: true, configurable: true });
      current = value;
    },
  });
  await tools.charge({ cents: 100 });
  return "honest end";
}`;

async function runForger(injection: string, epoch?: number) {
  const charges: unknown[] = [];
  const toolset = defineToolset("wire", {
    charge: {
      unsafeToRepeat: true,
      run: (args: unknown) => {
        charges.push(args);
        return { charged: true };
      },
    },
  });
  const script = await compileScript({ source: forger(injection), filename: "forger.ts" });
  const result = await runInProcess({
    script,
    sandbox: sb,
    toolset,
    ...(epoch === undefined ? {} : { epoch }),
  });
  return { result, charges, kinds: result.journal.map((entry) => entry.kind) };
}

describe("forged commands", () => {
  it("cannot splice a completion and a call after it into the batch", async () => {
    const { result, charges, kinds } = await runForger(INJECTION);
    // No forged completion stands, and the batch that carried it was refused whole.
    expect(kinds, `journal: ${kinds.join(", ")}`).toEqual(["run.started", "run.failed"]);
    expect(result.status).toBe("failed");
    expect(result.error).toMatchObject({ code: "SANDBOX_ERROR" });
    expect(result.error?.message).toMatch(/invalid command.*follows the run's end/);
    expect(charges, "the unsafeToRepeat tool never ran").toEqual([]);
  });

  it("cannot splice a completion into an epoch-1 run's batch either (the host's check)", async () => {
    const { result, charges, kinds } = await runForger(INJECTION, 1);
    expect(kinds, `journal: ${kinds.join(", ")}`).toEqual(["run.started", "run.failed"]);
    expect(result.error).toMatchObject({ code: "SANDBOX_ERROR" });
    expect(charges, "the unsafeToRepeat tool never ran").toEqual([]);
  });

  it("cannot splice in a call with an id of its own", async () => {
    const { result, charges, kinds } = await runForger(FAR_ID);
    expect(kinds, `journal: ${kinds.join(", ")}`).toEqual(["run.started", "run.failed"]);
    expect(result.error?.message).toMatch(/command id 1000 is not the next one, 2/);
    expect(charges).toEqual([]);
  });
});

describe("the wire's schema", () => {
  const limits = { maxValueBytes: 64 };
  const parse = (batch: unknown[]) =>
    parseCommands(
      JSON.stringify(batch),
      (site) => `mapped ${site}`,
      (stack) => stack,
      limits,
    );
  const call = { t: "call", id: 1, name: "x", site: "3:7", args: { a: 1 } };

  it("reads the commands the runtime writes", () => {
    expect(
      parse([
        call,
        { t: "timer", id: 2, due: 1000, site: "" },
        { t: "cancel", id: 2, site: "4:1" },
        { t: "out", stream: "stderr", site: "5:1", text: "hi" },
        { t: "done", ok: false, error: { name: "E", message: "m", stack: "s", code: "X" } },
      ]),
    ).toEqual([
      { type: "call", id: 1, name: "x", args: { a: 1 }, callsite: "mapped 3:7" },
      { type: "timer.set", id: 2, due: 1000, callsite: "mapped " },
      { type: "timer.cancel", id: 2, callsite: "mapped 4:1" },
      { type: "output", stream: "stderr", text: "hi", callsite: "mapped 5:1" },
      { type: "fail", error: { name: "E", message: "m", stack: "s", code: "SCRIPT_ERROR" } },
    ]);
  });

  const refused: [string, unknown[], RegExp][] = [
    ["a command after the end", [{ t: "done", ok: true, value: 1 }, call], /follows the run's end/],
    [
      "a second end",
      [
        { t: "done", ok: true, value: 1 },
        { t: "done", ok: true, value: 2 },
      ],
      /follows/,
    ],
    ["an unknown field", [{ ...call, unsafe: true }], /unknown field unsafe/],
    ["a callsite that is not line:column", [{ ...call, site: '1:1"x' }], /line:column/],
    ["a missing value", [{ t: "done", ok: true }], /result is missing/],
    ["arguments over the size limit", [{ ...call, args: "y".repeat(100) }], /over the limit of 64/],
    ["an ok that is not a boolean", [{ t: "done", ok: 1, value: 1 }], /not a boolean/],
    ["an error that is not an object", [{ t: "done", ok: false, error: "e" }], /not an object/],
    [
      "an error message that is not a string",
      [{ t: "done", ok: false, error: { name: "E", message: 1 } }],
      /message is not a string/,
    ],
    ["a due time past the last date", [{ t: "timer", id: 1, due: 9e15, site: "" }], /out of range/],
    ["a command that is an array", [[1]], /not an object/],
  ];
  for (const [what, batch, message] of refused) {
    it(`refuses ${what}`, () => expect(() => parse(batch)).toThrow(message));
  }

  it("refuses a value nested deeper than a host can walk", () => {
    const deep = "[".repeat(5000) + "]".repeat(5000);
    const batch = `[{"t":"call","id":1,"name":"x","site":"","args":${deep}}]`;
    expect(() =>
      parseCommands(
        batch,
        (s) => s,
        (s) => s,
        { maxValueBytes: 1 << 20 },
      ),
    ).toThrow(/nested more than 4000 deep/);
  });
});
