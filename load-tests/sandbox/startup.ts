/** Figure 3: starting a new run of a cached script on a warm isolate. */
import { newSeed } from "@rewind/core";
import { Sandbox } from "@rewind/sandbox";
import { SMALL, START, compile } from "./fixtures.js";
import { Report, line, ms, now, since, summarize } from "./stats.js";

const RUNS = 500;
const WARMUP = 20;

export async function startup(report: Report): Promise<void> {
  console.log(`\n[3] New run of a cached script: instantiate + start, ${RUNS} runs`);
  const script = await compile(SMALL, "small.ts");
  const sandbox = new Sandbox();
  const seeds = Array.from({ length: RUNS + WARMUP }, () => newSeed());
  const total: number[] = [];
  const inst: number[] = [];
  let isolates = 0;
  try {
    for (let i = 0; i < RUNS + WARMUP; i++) {
      const t0 = now();
      const instance = await sandbox.instantiate(script, { seed: seeds[i]!, startAt: START });
      const ti = since(t0);
      const commands = await instance.start({ i });
      const tt = since(t0);
      instance.dispose(); // not timed
      if (commands[0]?.type !== "call")
        throw new Error(`run ${i} emitted ${JSON.stringify(commands)}`);
      if (i < WARMUP) continue;
      inst.push(ti);
      total.push(tt);
      if (i % sandbox.options.runsPerIsolate === 0) isolates++;
    }
  } finally {
    sandbox.dispose();
  }
  const s = summarize(total);
  console.log(line("instantiate + start", s, ms));
  console.log(line("instantiate only", summarize(inst), ms));
  console.log(
    `  (a new isolate every ${sandbox.options.runsPerIsolate} runs: ${isolates} in the sample)`,
  );
  report.check("3. new run of cached script, median", ms(s.median), "≤ 2 ms", s.median <= 2e6);
  report.info("3. new run of cached script, p99", ms(s.p99));
}
