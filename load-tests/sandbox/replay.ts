/** Figure 2: replay speed of a 10,000-call journal. */
import type { GuestCommand, JournalEntry, RunStartedEntry } from "@rewind/core";
import { runInProcess } from "@rewind/executor";
import { RunEngine } from "@rewind/journal";
import { Sandbox, type CompiledScript, type SandboxOptions } from "@rewind/sandbox";
import { LOOP, compile, toolset } from "./fixtures.js";
import { Report, int, line, ms, now, since, summarize } from "./stats.js";

const CALLS = 10_000;
const REPEATS = 5;

async function replays(
  script: CompiledScript,
  journal: readonly JournalEntry[],
  mode: SandboxOptions["mode"],
) {
  const sandbox = new Sandbox({ mode });
  const started = journal[0] as RunStartedEntry;
  const instantiate: number[] = [];
  const replay: number[] = [];
  try {
    for (let rep = 0; rep <= REPEATS; rep++) {
      let t0 = now();
      const instance = await sandbox.instantiate(script, {
        seed: started.seed,
        startAt: started.at,
      });
      const ti = since(t0);
      t0 = now();
      const { engine, entries } = await RunEngine.resume(instance, journal);
      const tr = since(t0);
      instance.dispose();
      if (
        entries.length !== 0 ||
        engine.outcome !== "completed" ||
        engine.journal.length !== journal.length
      ) {
        throw new Error(`replay ended ${engine.outcome} with ${entries.length} new entries`);
      }
      if (rep === 0) continue; // warm-up
      instantiate.push(ti);
      replay.push(tr);
    }
  } finally {
    sandbox.dispose();
  }
  return { instantiate: summarize(instantiate), replay: summarize(replay) };
}

/** The engine alone: a driver that answers with the commands the real script emitted. */
async function engineAlone(script: CompiledScript, journal: readonly JournalEntry[]) {
  const started = journal[0] as RunStartedEntry;
  const sandbox = new Sandbox();
  const instance = await sandbox.instantiate(script, { seed: started.seed, startAt: started.at });
  const steps: GuestCommand[][] = [];
  const keep = (commands: GuestCommand[]) => (steps.push([...commands]), commands);
  const driver = {
    start: async (input: RunStartedEntry["input"]) => keep(await instance.start(input)),
    deliver: async (event: Parameters<typeof instance.deliver>[0]) =>
      keep(await instance.deliver(event)),
  };
  await RunEngine.resume(driver, journal);
  instance.dispose();
  sandbox.dispose();
  const times: number[] = [];
  for (let rep = 0; rep <= REPEATS; rep++) {
    let step = 0;
    // The engine consumes the arrays it is given: hand it copies.
    const next = async () => [...steps[step++]!];
    const canned = { start: next, deliver: next };
    const t0 = now();
    const { engine } = await RunEngine.resume(canned, journal);
    if (rep > 0) times.push(since(t0));
    if (engine.outcome !== "completed") throw new Error(`canned replay ended ${engine.outcome}`);
  }
  return summarize(times);
}

export async function replaySpeed(report: Report): Promise<void> {
  console.log(`\n[2] Replay of a ${CALLS}-call journal (${REPEATS} runs after a warm-up)`);
  const script = await compile(LOOP, "loop.ts");
  const sandbox = new Sandbox();
  const recorded = await runInProcess({ script, sandbox, input: { n: CALLS }, toolset });
  sandbox.dispose();
  if (recorded.status !== "completed") throw new Error(`recording ended ${recorded.status}`);
  const journal = recorded.journal;
  console.log(`  journal: ${journal.length} entries`);

  const sync = await replays(script, journal, "sync");
  console.log(line("RunEngine.resume, sync", sync.replay, ms));
  console.log(line("sandbox.instantiate (not in replay)", sync.instantiate, ms));
  const alone = await engineAlone(script, journal);
  console.log(line("RunEngine.resume, canned driver", alone, ms));
  const async = await replays(script, journal, "async");
  console.log(line("RunEngine.resume, async", async.replay, ms));

  const share = 100 * (1 - alone.median / sync.replay.median);
  console.log(
    `  engine alone is ${(100 - share).toFixed(0)} % of the sync replay: the sandbox is the rest`,
  );
  const rate = (s: { median: number }) => journal.length / (s.median / 1e9);
  console.log(
    `  sync: ${int(rate(sync.replay))} entries/s; async: ${int(rate(async.replay))} entries/s`,
  );

  report.check(
    "2. replay rate, sync, median",
    `${int(rate(sync.replay))} /s`,
    "≥ 100,000 /s",
    rate(sync.replay) >= 100_000,
  );
  report.check(
    `2. replay ${journal.length} entries, sync, median`,
    ms(sync.replay.median),
    "≤ 100 ms",
    sync.replay.median <= 100e6,
  );
  report.info("2. instantiate before replay, median", ms(sync.instantiate.median));
  report.info("2. replay, engine alone (canned driver)", ms(alone.median));
  report.info("2. replay, share spent in the sandbox", `${share.toFixed(0)} %`);
  report.info("2. replay rate, async, median", `${int(rate(async.replay))} /s`);
}
