/** Figure 3: starting a new run of a cached script on a warm isolate. */
import { newSeed } from "@rewind/core";
import { Sandbox, type CompiledScript } from "@rewind/sandbox";
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
  await startupAsSandboxProcess(report, script, seeds);
}

/**
 * The same runs as a sandbox process starts them (`rewind worker`, `rewind dev`): sync mode, the
 * next run's context made ahead while the process is idle (Sandbox.prepare: the V8 context and
 * the guest runtime evaluated in it), so a run's start waits only for the rest (the guest
 * runtime's `init` with the run's seed and clock, the script, its top level). Each part timed
 * apart: what a new run costs the process, and what is left on its start's path.
 */
async function startupAsSandboxProcess(
  report: Report,
  script: CompiledScript,
  seeds: readonly string[],
): Promise<void> {
  console.log(`  as a sandbox process runs them (sync mode, the context made ahead):`);
  const sandbox = new Sandbox({ mode: "sync" });
  const ahead: number[] = [];
  const instantiate: number[] = [];
  const start: number[] = [];
  try {
    for (let i = 0; i < RUNS + WARMUP; i++) {
      const t0 = now();
      sandbox.prepare(); // synchronous in sync mode: ready when it returns
      const t1 = now();
      const instance = await sandbox.instantiate(script, { seed: seeds[i]!, startAt: START });
      const t2 = now();
      const commands = await instance.start({ i });
      const t3 = now();
      instance.dispose();
      if (commands[0]?.type !== "call")
        throw new Error(`run ${i} emitted ${JSON.stringify(commands)}`);
      if (i < WARMUP) continue;
      ahead.push(Number(t1 - t0));
      instantiate.push(Number(t2 - t1));
      start.push(Number(t3 - t2));
    }
  } finally {
    sandbox.dispose();
  }
  const made = summarize(ahead);
  const path = summarize(instantiate.map((t, i) => t + start[i]!));
  console.log(line("context made ahead (prepare)", made, ms));
  console.log(line("instantiate with it (init, script)", summarize(instantiate), ms));
  console.log(line("start (the top level)", summarize(start), ms));
  report.info("3. sandbox process: context made ahead, median", ms(made.median));
  report.info("3. sandbox process: a run's start after it, median", ms(path.median));
}
