/** Figure 4: memory of idle runs waiting on a signal, then the time to wake them all. */
import { RunEngine } from "@rewind/journal";
import { Sandbox, type ScriptInstance } from "@rewind/sandbox";
import { IDLE, START, compile, startedEntry } from "./fixtures.js";
import { Report, kib, ms, now, since } from "./stats.js";

const RUNS = 1_000;
const TARGET_BYTES = 1_000_000;

const gc = (globalThis as { gc?: () => void }).gc;

async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export async function idleMemory(report: Report): Promise<void> {
  console.log(`\n[4] Memory of ${RUNS} idle runs awaiting waitForSignal("go")`);
  if (gc === undefined)
    console.log("  warning: no global.gc (run node with --expose-gc): figures are noisier");
  const script = await compile(IDLE, "idle.ts");
  const startedEntries = Array.from({ length: RUNS }, (_, i) =>
    startedEntry(script, { i }, `run_idle_${i}`),
  );

  // Warm the host first (guest bundle built, code paths compiled) on a sandbox thrown away.
  const warm = new Sandbox();
  for (const started of startedEntries.slice(0, 20)) {
    const instance = await warm.instantiate(script, { seed: started.seed, startAt: started.at });
    await RunEngine.resume(instance, [started]);
    instance.dispose();
  }
  warm.dispose();

  const sandbox = new Sandbox({ runsPerIsolate: 256 });
  const runs: { engine: RunEngine; instance: ScriptInstance }[] = [];
  await settle();
  const before = { ...process.memoryUsage(), sandbox: sandbox.heapUsedBytes() };
  let t0 = now();
  for (const started of startedEntries) {
    const instance = await sandbox.instantiate(script, { seed: started.seed, startAt: started.at });
    const { engine, entries } = await RunEngine.resume(instance, [started]);
    if (entries.length !== 0 || engine.outcome !== undefined)
      throw new Error(`idle run did not wait`);
    runs.push({ engine, instance });
  }
  const startTime = since(t0);
  await settle();
  const after = { ...process.memoryUsage(), sandbox: sandbox.heapUsedBytes() };
  const per = (key: keyof typeof after) => (after[key] - before[key]) / RUNS;
  console.log(`  started ${RUNS} runs in ${ms(startTime)} (${sandbox.liveRuns} live)`);
  console.log(
    `  sandbox.heapUsedBytes: ${kib(before.sandbox)} -> ${kib(after.sandbox)}: ${kib(per("sandbox"))} per run`,
  );
  console.log(
    `  process RSS:           ${kib(before.rss)} -> ${kib(after.rss)}: ${kib(per("rss"))} per run`,
  );
  console.log(
    `  host JS heapUsed:      ${kib(before.heapUsed)} -> ${kib(after.heapUsed)}: ${kib(per("heapUsed"))} per run`,
  );

  t0 = now();
  let completed = 0;
  for (const { engine } of runs) {
    await engine.deliver({ kind: "signal", name: "go", payload: { ok: true }, at: START + 60_000 });
    if (engine.outcome === "completed") completed++;
  }
  const signalTime = since(t0);
  for (const { instance } of runs) instance.dispose();
  const left = sandbox.liveRuns;
  sandbox.dispose();
  console.log(
    `  signalled ${RUNS} runs in ${ms(signalTime)}: ${completed} completed, ${left} left live after dispose`,
  );
  if (completed !== RUNS)
    throw new Error(`only ${completed} of ${RUNS} runs completed on the signal`);

  report.check(
    "4. idle run, isolate heap (heapUsedBytes)",
    kib(per("sandbox")),
    "≤ 1 MB",
    per("sandbox") <= TARGET_BYTES,
  );
  report.check("4. idle run, process RSS", kib(per("rss")), "≤ 1 MB", per("rss") <= TARGET_BYTES);
  report.info("4. start 1,000 idle runs, total", ms(startTime));
  report.info("4. signal 1,000 runs to completion, total", ms(signalTime));
}
