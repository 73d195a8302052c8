/**
 * Forks: "a fork that reuses 10,000 recorded calls reaches its first live call in ≤ 1 s".
 * A parent run of 10,001 calls is recorded in mock mode; a corrected script that differs only at
 * the last call is forked from it. Measured: from the fork's start to its first live tool call.
 * Run with `npm run bench:forks -w load-tests` (after `npm run build`). Exits 1 if missed.
 */
import { defineToolset } from "@rewind/core";
import { runInProcess } from "@rewind/executor";
import { Sandbox, compileScript } from "@rewind/sandbox";

const CALLS = 10_000;
const script = (last: string) => `import { tools } from "rewind";
export default async function main() {
  let sum = 0;
  for (let i = 0; i < ${CALLS}; i++) sum += (await tools.step({ i })).i;
  return (await tools.finish({ how: "${last}", sum })).ok;
}`;

const sandbox = new Sandbox({ mode: "sync" });
let firstLive = 0;
const toolset = defineToolset("bench", {
  step: async (args: { i: number }) => ({ i: args.i }),
  finish: async () => {
    if (firstLive === 0) firstLive = performance.now();
    return { ok: true };
  },
});

const parent = await runInProcess({
  script: await compileScript({ source: script("old"), filename: "p.ts" }),
  sandbox,
  toolset,
  seed: "ab".repeat(32),
});
const fixed = await compileScript({ source: script("new"), filename: "fixed.ts" });
const timings: number[] = [];
for (let round = 0; round < 5; round++) {
  firstLive = 0;
  const began = performance.now();
  const fork = await runInProcess({
    script: fixed,
    sandbox,
    toolset,
    fork: { parent: parent.journal },
  });
  if (fork.status !== "completed" || fork.reused !== CALLS * 2)
    throw new Error(`fork ${fork.status}, reused ${fork.reused}`);
  timings.push(firstLive - began);
}
timings.sort((a, b) => a - b);
const median = timings[2]!;
const pass = median <= 1000;
console.log(
  `parent: ${parent.journal.length} entries; fork reuses ${CALLS * 2} entries (${CALLS} calls)`,
);
console.log(`first live call after ${timings.map((t) => t.toFixed(0)).join(" / ")} ms (5 rounds)`);
console.log(
  `=> 5. fork reusing ${CALLS} calls, to its first live call, median: ${median.toFixed(0)} ms (target ≤ 1000 ms) ${pass ? "PASS" : "FAIL"}`,
);
sandbox.dispose();
process.exit(pass ? 0 : 1);
