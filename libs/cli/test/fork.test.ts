import { writeFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineToolset } from "@rewind/core";
import { compileScript } from "@rewind/sandbox";
import { usePlatform } from "./platform-harness.js";

const toolset = defineToolset("prices", {
  price: async (args: { step: number }) => ({ cents: args.step * 100 }),
});
const script = (bug: boolean) => `import { tools } from "rewind";
export default async function main() {
  let total = 0;
  for (let step = 1; step <= 5; step++) {
    const priced = await tools.price({ step });
    total += ${bug ? "step === 3 ? (priced as any).missing.cents : priced.cents" : "priced.cents"};
  }
  return total;
}
`;
const h = usePlatform([toolset]);

it("rewind fork prints the fork's id, the calls reused and the first live call", async () => {
  const api = h.api;
  const { id } = await api.runs.start({
    script: await compileScript({ source: script(true), filename: "p.ts" }),
    toolset: "prices",
  });
  expect(await api.runs.result(id, "20s")).toMatchObject({ status: "failed" });
  const fixed = path.join(h.dir, "fixed.ts");
  writeFileSync(fixed, script(false));
  const preview = await h.rewind("fork", id, "--script", fixed, "--dry-run");
  expect(preview.code).toBe(0);
  expect(preview.stdout).toMatch(
    /would reuse 6 entries of run_\w+\nwould run live from call price\(\{ step: 4 \}\) at seq 8 \(fixed\.ts:5:\d+\)/,
  );
  expect((await api.runs.list()).runs).toHaveLength(1); // a dry run stores nothing
  const { code, stdout, stderr } = await h.rewind("fork", id, "--script", fixed);
  expect(code).toBe(0);
  const forkId = stdout.trim();
  expect(forkId).toMatch(/^run_/);
  expect(stderr).toMatch(/reuse\s+6 entries of run_/);
  expect(stderr).toMatch(
    /run live from\s+call price\(\{ step: 4 \}\) at seq 8 \(fixed\.ts:5:\d+\)/,
  );
  expect(await api.runs.result(forkId, "20s")).toMatchObject({ status: "completed", result: 1500 });

  // runs show marks what the fork reused from its parent and what ran live.
  const shown = await h.rewind("runs", "show", forkId);
  expect(shown.stdout).toMatch(/reused\s+6 entries of its parent/);
  expect(shown.stdout).toMatch(/\n7\s+reused\s+call\.result/);
  expect(shown.stdout).toMatch(/\n8\s+live\s+call\s+price\(\{ step: 4 \}\)/);
  const json = JSON.parse((await h.rewind("runs", "show", forkId, "--json")).stdout) as {
    reused: number;
    parent: { runId: string };
  };
  expect(json).toMatchObject({ reused: 6, parent: { runId: id } });
});
