/** Figure 1: overhead of one tool call in a hot run, in-process, with a trivial tool. */
import type { GuestCommand, JournalEntry, CallEntry } from "@rewind/core";
import { runInProcess } from "@rewind/executor";
import { RunEngine } from "@rewind/journal";
import { Sandbox, type CompiledScript, type SandboxOptions } from "@rewind/sandbox";
import { LOOP, START, compile, noop, startedEntry, toolset } from "./fixtures.js";
import { Report, line, ms, now, since, summarize, us } from "./stats.js";

const CALLS = 20_000;
const WARMUP = 2_000;
const TARGET_NS = 20_000;
const RUNS_IN_PROCESS = 3;

const isCall = (e: JournalEntry): e is CallEntry => e.kind === "call";

/** RunEngine + ScriptInstance driven directly: each sample is tool + engine.deliver round trip. */
async function viaEngine(
  sandbox: Sandbox,
  script: CompiledScript,
  n: number,
): Promise<Float64Array> {
  const started = startedEntry(script, { n }, "run_bench_hot");
  const instance = await sandbox.instantiate(script, { seed: started.seed, startAt: started.at });
  try {
    const { engine, entries } = await RunEngine.resume(instance, [started]);
    const samples = new Float64Array(n);
    let call = entries.find(isCall);
    let i = 0;
    while (call !== undefined) {
      const t0 = now();
      const result = noop(call.args as { i: number });
      const out = await engine.deliver({
        kind: "call.result",
        callSeq: call.seq,
        result,
        at: engine.clock,
      });
      samples[i++] = since(t0);
      call = out.find(isCall);
    }
    if (engine.outcome !== "completed" || i !== n)
      throw new Error(`hot run ended ${engine.outcome} after ${i} calls`);
    return samples;
  } finally {
    instance.dispose();
  }
}

/** The ScriptInstance alone (no engine): what the sandbox wall costs per call. */
async function viaInstance(
  sandbox: Sandbox,
  script: CompiledScript,
  n: number,
): Promise<Float64Array> {
  const instance = await sandbox.instantiate(script, { seed: "0".repeat(64), startAt: START });
  try {
    const samples = new Float64Array(n);
    const isGuestCall = (c: GuestCommand) => c.type === "call";
    let commands = await instance.start({ n });
    let call = commands.find(isGuestCall);
    let i = 0;
    while (call !== undefined) {
      const t0 = now();
      const result = noop(call.args as { i: number });
      commands = await instance.deliver({ type: "call.result", id: call.id, at: START, result });
      samples[i++] = since(t0);
      call = commands.find(isGuestCall);
    }
    if (i !== n || commands[0]?.type !== "complete")
      throw new Error(`raw run stopped after ${i} calls`);
    return samples;
  } finally {
    instance.dispose();
  }
}

async function direct(
  script: CompiledScript,
  mode: SandboxOptions["mode"],
  drive: typeof viaEngine,
): Promise<ReturnType<typeof summarize>> {
  const sandbox = new Sandbox({ mode });
  try {
    await drive(sandbox, script, WARMUP);
    return summarize(await drive(sandbox, script, CALLS));
  } finally {
    sandbox.dispose();
  }
}

export async function hotCalls(report: Report): Promise<void> {
  console.log(
    `\n[1] Tool-call overhead, hot run, ${CALLS} sequential calls of a trivial sync tool`,
  );
  const script = await compile(LOOP, "loop.ts");

  const sync = await direct(script, "sync", viaEngine);
  console.log(line("engine.deliver round trip, sync", sync, us));
  const raw = await direct(script, "sync", viaInstance);
  console.log(line("instance.deliver only, sync", raw, us));
  const async = await direct(script, "async", viaEngine);
  console.log(line("engine.deliver round trip, async", async, us));

  // The full in-process path: total time / calls, median of a few runs (the machine is noisy).
  const sandbox = new Sandbox();
  try {
    await runInProcess({ script, sandbox, input: { n: WARMUP }, toolset });
    const totals: number[] = [];
    for (let rep = 0; rep < RUNS_IN_PROCESS; rep++) {
      const t0 = now();
      const result = await runInProcess({ script, sandbox, input: { n: CALLS }, toolset });
      totals.push(since(t0));
      if (result.status !== "completed") throw new Error(`runInProcess ended ${result.status}`);
    }
    const total = summarize(totals).median;
    const perCall = total / CALLS;
    console.log(
      `  runInProcess: ${totals.map((t) => ms(t)).join(", ")} for ${CALLS} calls; ` +
        `median ${us(perCall)} per call`,
    );
    const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
    console.log(
      `  ratios (same run): engine/instance ${ratio(sync.mean, raw.mean)} (means), ` +
        `async/sync ${ratio(async.median, sync.median)} (medians), ` +
        `runInProcess/engine ${ratio(perCall, sync.mean)} (vs mean)`,
    );

    report.check(
      "1. tool call, engine+sandbox sync, median",
      us(sync.median),
      "≤ 20 µs",
      sync.median <= TARGET_NS,
    );
    report.info("1. tool call, engine+sandbox sync, p99", us(sync.p99));
    report.info("1. tool call, instance.deliver only sync, median", us(raw.median));
    report.info("1. tool call, engine+sandbox async, median", us(async.median));
    report.info("1. tool call, engine+sandbox async, p99", us(async.p99));
    // The target is on the median above; the full path's average is reported beside it.
    report.info("1. tool call via runInProcess, total/calls", us(perCall));
  } finally {
    sandbox.dispose();
  }
}
