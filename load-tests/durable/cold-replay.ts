/**
 * Figure 2: cold replay of a run with 10,000 journaled calls, reading its journal from Postgres.
 * The run is recorded in-process (mock mode, fast) and its journal committed to the store as the
 * executor would have; the script then waits for a signal, so the run needs exactly one more event.
 */
import type { JournalEntry, RunStartedEntry } from "@rewind/core";
import { runInProcess } from "@rewind/executor";
import { RunEngine } from "@rewind/journal";
import { Sandbox, type CompiledScript, type SandboxOptions } from "@rewind/sandbox";
import type { Store } from "@rewind/store";
import type pg from "pg";
import { Report, line, ms, now, since, summarize } from "../sandbox/stats.js";
import { LOOP_THEN_SIGNAL, LiveExecutor, compile, newRunId, toolset } from "./fixtures.js";

const CALLS = 10_000;
const REPEATS = 5;
const TARGET_NS = 500e6;
const CHUNK = 4_000; // entries per commit while loading the journal

/** Records the run in-process and commits its journal to the store; the run is left waiting. */
async function storedRun(store: Store, script: CompiledScript): Promise<JournalEntry[]> {
  const sandbox = new Sandbox();
  const runId = newRunId("cold");
  let journal: JournalEntry[];
  try {
    const recorded = await runInProcess({ script, sandbox, input: { n: CALLS }, toolset, runId });
    if (recorded.status !== "waiting") throw new Error(`recording ended ${recorded.status}`);
    journal = recorded.journal;
  } finally {
    sandbox.dispose();
  }
  await store.putScript("default", script);
  await store.createRun({ started: journal[0] as RunStartedEntry, ttlMs: 3_600_000 });
  const lease = (await store.acquireLease(runId, "bench-loader", 60_000))!;
  for (let from = 1; from < journal.length; from += CHUNK) {
    const entries = journal.slice(from, from + CHUNK);
    const [outcome] = await store.commit([{ lease, afterSeq: from, entries, status: "waiting" }]);
    if (outcome !== "ok") throw new Error(`loading the journal: ${outcome}`);
  }
  await store.releaseLease(lease);
  return journal;
}

/** readJournal + instantiate + RunEngine.resume, as Executor.load does them, timed apart. */
async function coldReplays(
  store: Store,
  script: CompiledScript,
  runId: string,
  expected: number,
  mode: SandboxOptions["mode"],
) {
  const sandbox = new Sandbox({ mode });
  const read: number[] = [];
  const inst: number[] = [];
  const replay: number[] = [];
  const total: number[] = [];
  try {
    for (let rep = 0; rep <= REPEATS; rep++) {
      const t0 = now();
      const journal = await store.readJournal(runId);
      const tr = since(t0);
      const started = journal[0] as RunStartedEntry;
      const instance = await sandbox.instantiate(script, {
        seed: started.seed,
        startAt: started.at,
      });
      const ti = since(t0) - tr;
      const { engine, entries } = await RunEngine.resume(instance, journal, {
        maxValueBytes: sandbox.options.maxValueBytes,
      });
      const tt = since(t0);
      instance.dispose();
      if (journal.length !== expected || entries.length !== 0 || engine.outcome !== undefined)
        throw new Error(`cold replay: ${journal.length} entries read, ${entries.length} new`);
      if (rep === 0) continue; // warm-up
      read.push(tr);
      inst.push(ti);
      replay.push(tt - tr - ti);
      total.push(tt);
    }
  } finally {
    sandbox.dispose();
  }
  return {
    read: summarize(read),
    inst: summarize(inst),
    replay: summarize(replay),
    total: summarize(total),
  };
}

/** The value fields, by entry kind, that the journal stores as references (as the store encodes). */
const VALUE_FIELDS: Record<string, string> = {
  "run.started": "input",
  call: "args",
  "call.result": "result",
  signal: "payload",
  "run.completed": "result",
};

/** store.readJournal's two queries, timed on their own with plain `pg` (median of REPEATS, ns). */
async function readJournalQueries(client: pg.Client, runId: string) {
  const rows: number[] = [];
  const values: number[] = [];
  let refCount = 0;
  for (let rep = 0; rep <= REPEATS; rep++) {
    let t0 = now();
    const { rows: entries } = await client.query<{ kind: string; body: Record<string, string> }>(
      "SELECT seq, kind, at, callsite, body FROM rw_journal WHERE run_id = $1 AND seq >= $2 ORDER BY seq",
      [runId, 1],
    );
    const tr = since(t0);
    const refs = [
      ...new Set(
        entries.flatMap((e) => (VALUE_FIELDS[e.kind] ? [e.body[VALUE_FIELDS[e.kind]!]!] : [])),
      ),
    ];
    refCount = refs.length;
    t0 = now();
    await client.query("SELECT ref, body, blob_key FROM rw_values WHERE ref = ANY($1)", [refs]);
    const tv = since(t0);
    if (rep === 0) continue; // warm-up
    rows.push(tr);
    values.push(tv);
  }
  return { rows: summarize(rows).median, values: summarize(values).median, refs: refCount };
}

/** End to end: a new Executor (new owner, stealLeases) activates the cold run, which takes its signal. */
async function coldActivation(store: Store, runId: string, mode: SandboxOptions["mode"]) {
  const live = new LiveExecutor(store, mode, `bench-cold-${mode}`, true);
  try {
    await store.addInbox(runId, { kind: "signal", name: "go", payload: true });
    const t0 = now();
    await live.run(runId);
    return since(t0);
  } finally {
    await live.close();
  }
}

export async function coldReplay(report: Report, store: Store, client: pg.Client): Promise<void> {
  console.log(
    `\n[2] Cold replay of a run with ${CALLS} journaled calls, journal read from Postgres`,
  );
  const script = await compile(LOOP_THEN_SIGNAL, "loop-then-signal.ts");
  let t0 = now();
  const journal = await storedRun(store, script);
  const runId = journal[0]!.kind === "run.started" ? (journal[0] as RunStartedEntry).runId : "";
  console.log(
    `  journal: ${journal.length} entries (${CALLS} calls), recorded and committed in ${ms(since(t0))}`,
  );

  const sync = await coldReplays(store, script, runId, journal.length, "sync");
  console.log(line("sync: readJournal", sync.read, ms));
  console.log(line("sync: sandbox.instantiate", sync.inst, ms));
  console.log(line("sync: RunEngine.resume", sync.replay, ms));
  console.log(line("sync: total", sync.total, ms));
  const queries = await readJournalQueries(client, runId);
  console.log(
    `  readJournal's queries alone (pg): journal rows ${ms(queries.rows)}, values (ref = ANY of ` +
      `${queries.refs} refs) ${ms(queries.values)}; decoding is the rest of readJournal`,
  );
  const async = await coldReplays(store, script, runId, journal.length, "async");
  console.log(line("async: readJournal", async.read, ms));
  console.log(line("async: sandbox.instantiate", async.inst, ms));
  console.log(line("async: RunEngine.resume", async.replay, ms));
  console.log(line("async: total", async.total, ms));

  // End to end through the executor, one cold activation per mode (each run can end only once).
  t0 = now();
  const other = await storedRun(store, script);
  const otherId = (other[0] as RunStartedEntry).runId;
  console.log(`  second copy for the end-to-end figures committed in ${ms(since(t0))}`);
  const e2eAsync = await coldActivation(store, runId, "async");
  const e2eSync = await coldActivation(store, otherId, "sync");
  console.log(
    `  new Executor, activate → completed (lease, getRun, readJournal, getScript, instantiate, ` +
      `resume, inbox, signal commit, release): async ${ms(e2eAsync)}, sync ${ms(e2eSync)}`,
  );

  report.check(
    "2. cold replay 10k calls, sync, read+inst+resume",
    ms(sync.total.median),
    "≤ 500 ms",
    sync.total.median <= TARGET_NS,
  );
  report.info(
    "2. sync breakdown read / instantiate / resume",
    `${ms(sync.read.median)} / ${ms(sync.inst.median)} / ${ms(sync.replay.median)}`,
  );
  report.info(
    "2. readJournal SQL: rows / values queries",
    `${ms(queries.rows)} / ${ms(queries.values)}`,
  );
  report.info("2. cold replay, async, read+inst+resume", ms(async.total.median));
  report.info(
    "2. async breakdown read / instantiate / resume",
    `${ms(async.read.median)} / ${ms(async.inst.median)} / ${ms(async.replay.median)}`,
  );
  report.info("2. cold activation e2e (new Executor), async", ms(e2eAsync));
  report.info("2. cold activation e2e (new Executor), sync", ms(e2eSync));
}
