/**
 * CPU_LIMIT names what the script was doing when it was stopped: an endless loop, or so much
 * output or so many timers in one turn that their bookkeeping took the whole limit. A script that
 * logged 100,000 lines has no loop to look for.
 */
import { afterAll, describe, expect, it } from "vitest";
import { runInProcess } from "@rewind/executor";
import { defineToolset } from "@rewind/core";
import { compileScript, Sandbox } from "../src/index.js";

const CPU_LIMIT_MS = 250;
const sandboxes = [
  new Sandbox({ mode: "sync", cpuLimitMs: CPU_LIMIT_MS }),
  new Sandbox({ mode: "async", cpuLimitMs: CPU_LIMIT_MS }),
];
afterAll(() => {
  for (const sandbox of sandboxes) sandbox.dispose();
});

async function failureOf(sandbox: Sandbox, source: string) {
  const script = await compileScript({ source, filename: "x.ts" });
  const result = await runInProcess({ script, sandbox, toolset: defineToolset("none", {}) });
  expect(result.status).toBe("failed");
  return result.error!;
}

describe.each(sandboxes.map((sandbox) => [sandbox.options.mode, sandbox] as const))(
  "CPU_LIMIT's cause (%s mode)",
  (_mode, sandbox) => {
    it("100,000 log lines in one turn are named as output, not as an endless loop", async () => {
      const error = await failureOf(
        sandbox,
        `export default async function main() { for (let i = 0; i < 1e7; i++) console.log("line", i); }`,
      );
      expect(error.code).toBe("CPU_LIMIT");
      expect(error.message).not.toMatch(/endless loop/);
      expect(error.message).toMatch(/\d+ lines of output/);
    });

    it("100,000 timers in one turn are named as timers, not as an endless loop", async () => {
      const error = await failureOf(
        sandbox,
        `export default async function main() { for (let i = 0; i < 1e7; i++) setTimeout(() => {}, 1000 + i); }`,
      );
      expect(error.code).toBe("CPU_LIMIT");
      expect(error.message).not.toMatch(/endless loop/);
      expect(error.message).toMatch(/\d+ timers/);
    });

    it("a loop that emits nothing is still an endless loop", async () => {
      const error = await failureOf(
        sandbox,
        `export default async function main() { for (;;) {} }`,
      );
      expect(error.code).toBe("CPU_LIMIT");
      expect(error.message).toMatch(/endless loop/);
    });
  },
);
