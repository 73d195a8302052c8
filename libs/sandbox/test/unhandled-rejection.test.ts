/**
 * The known limit of every released epoch (libs/sandbox/HOW_IT_WORKS.md, "Unhandled rejections:
 * a known limit"): a rejection nobody handles fails the run only while isolated-vm still holds
 * the promise when the activation ends, and it holds such promises weakly. So the same forgotten
 * rejection fails a run that returns at once and is forgotten by one that allocates enough to make
 * the collector run first. This test states that behaviour as it is, on each epoch this runtime
 * serves, so that it cannot change unnoticed: an isolated-vm that holds them strongly makes the
 * second case fail the run, this test fails, and the rule of issue 12 (a run fails if and only if
 * a rejection still has no handler once its activation's microtasks drained) becomes the next
 * epoch of that runtime.
 */
import { afterAll, describe, expect, it } from "vitest";
import { compileScript } from "../src/compiler.js";
import { epochSupport } from "../src/epochs.js";
import { Sandbox } from "../src/host.js";
import { SEED } from "./sandbox-probe.js";

const FORGOTTEN = `Promise.reject(new Error("nobody handles me"));`;
// Short-lived strings by the hundred thousand: a few scavenges, which take the unreferenced
// rejected promise with them (an allocation the optimiser cannot remove).
const CHURN = `let junk: string[] = []; for (let i = 0; i < 3e5; i++) { junk.push("x" + i); if (junk.length > 100) junk = []; }`;

// A generous CPU limit: on a loaded machine the churn must not end as CPU_LIMIT instead.
const sandboxes = {
  sync: new Sandbox({ cpuLimitMs: 20_000 }),
  async: new Sandbox({ mode: "async", cpuLimitMs: 20_000 }),
};
afterAll(() => Object.values(sandboxes).forEach((s) => s.dispose()));

async function end(mode: keyof typeof sandboxes, epoch: number, body: string) {
  const script = await compileScript({
    filename: "x.ts",
    source: `export default async function main() { ${body} return 1; }`,
  });
  const instance = await sandboxes[mode].instantiate(script, { seed: SEED, startAt: 0, epoch });
  try {
    return (await instance.start(null)).at(-1);
  } finally {
    instance.dispose();
  }
}

for (const epoch of epochSupport().epochs)
  describe(`an unhandled rejection in epoch ${epoch}`, () => {
    for (const mode of ["sync", "async"] as const) {
      it(`fails the run when the activation ends before a collection (${mode})`, async () => {
        expect(await end(mode, epoch, FORGOTTEN)).toMatchObject({
          type: "fail",
          error: { message: "nobody handles me", code: "SCRIPT_ERROR" },
        });
      });

      it(`is forgotten when the collector ran first: the known limit (${mode})`, async () => {
        // Three runs, not one: the outcome must not depend on the isolate's history either.
        for (let i = 0; i < 3; i++)
          expect(await end(mode, epoch, `${FORGOTTEN} ${CHURN}`)).toEqual({
            type: "complete",
            result: 1,
          });
      });
    }
  });
