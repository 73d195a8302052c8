/**
 * The guest can forge commands (issue 17), on the embedded platform: a script that hands the
 * runtime crafted stack frames through an `Error.prepareStackTrace` accessor spliced a `done` and a
 * call after it into its command batch; the journal then held `run.completed` followed by a
 * `call.result`, and an `unsafeToRepeat` tool ran after the run had ended. The host now refuses
 * the batch: the run fails with SANDBOX_ERROR, and nothing runs or is journaled after it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { compileScript } from "@rewind/sandbox";
import { defineToolset } from "@rewind/sdk";
import { openHostilePlatform, type HostilePlatform } from "./harness.js";

const charges: unknown[] = [];
const payments = defineToolset("payments", {
  charge: {
    unsafeToRepeat: true,
    run: (args: unknown) => {
      charges.push(args);
      return { charged: true };
    },
  },
});

let h: HostilePlatform;
beforeAll(async () => {
  h = await openHostilePlatform({ toolsets: [payments] });
}, 180_000); // an embedded Postgres starting on a loaded machine
afterAll(async () => h?.close());
afterEach(async () => h.check());

/** Closes the callsite's string, ends the run, and calls the tool again after the end. */
const INJECTION =
  `1:1","args":null},{"t":"done","ok":true,"value":"forged"},` +
  `{"t":"call","id":2,"name":"charge","site":"1`;

const FORGER = `import { tools } from "rewind";
export default async function main() {
  const E = Error as any;
  const crafted = () => [{
    getFileName: () => "rewind-script.js",
    getLineNumber: () => ${JSON.stringify(INJECTION)},
    getColumnNumber: () => 0,
  }];
  let current: unknown = undefined;
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

describe("a script forging commands through its callsites", () => {
  it("fails with SANDBOX_ERROR; no tool runs and nothing is journaled after the end", async () => {
    const script = await compileScript({ source: FORGER, filename: "forger.ts" });
    const { id } = await h.api.runs.start({ script, toolset: "payments" });
    h.runs.add(id);
    const result = await h.api.runs.result(id, "30s");
    expect(result).toMatchObject({ status: "failed", error: { code: "SANDBOX_ERROR" } });
    const journal = await h.platform.store.readJournal(id);
    const kinds = journal.map((entry) => entry.kind);
    expect(kinds, kinds.join(", ")).toEqual(["run.started", "run.failed"]);
    expect(charges, "the unsafeToRepeat tool never ran").toEqual([]);
  }, 60_000);
});
