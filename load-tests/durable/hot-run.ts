/**
 * Figure 1: a tool call round trip in a hot run of the live Executor on Postgres, against the
 * floor of one bare `INSERT …; COMMIT` round trip measured in the same process, interleaved.
 * Also, for context, the group-commit effect of many concurrent runs through one Executor.
 */
import type { CallEntry, JournalEntry, RunStartedEntry } from "@rewind/core";
import { RunEngine } from "@rewind/journal";
import { runInProcess } from "@rewind/executor";
import { Sandbox, type CompiledScript } from "@rewind/sandbox";
import type { Store } from "@rewind/store";
import type pg from "pg";
import { Report, int, line, ms, now, since, summarize, us } from "../sandbox/stats.js";
import { countingStore } from "./db.js";
import { LOOP, LiveExecutor, compile, newRunId, probe, submit, toolset } from "./fixtures.js";
import { intervals, percentile, ratio } from "./stats.js";

const ROUNDS = 5;
const FLOOR_N = 400; // bare INSERTs per round: 2,000 in all
const HOT_CALLS = 400; // tool calls per hot run, one async and one sync run per round: 2,000 each
const WARMUP = 200;
const TARGET_RATIO = 1.3;
const DIAG_STEPS = 200; // store.commit steps alone, and SELECTs, per round

/** N sequential single-row INSERTs, each its own (autocommit) transaction: ns per round trip. */
async function insertFloor(client: pg.Client, n: number): Promise<Float64Array> {
  const samples = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const body = JSON.stringify({ i });
    const t0 = now();
    await client.query("INSERT INTO bench_floor (body) VALUES ($1)", [body]);
    samples[i] = since(t0);
  }
  return samples;
}

interface HotSample {
  elapsed: number;
  calls: number;
  /** Intervals between consecutive tool invocations: one round trip each. */
  intervals: Float64Array;
}

/** One run of `calls` sequential tool calls through the executor, from activate() to its end. */
async function hotRun(
  live: LiveExecutor,
  store: Store,
  script: CompiledScript,
  calls: number,
): Promise<HotSample> {
  const runId = await submit(store, script, { n: calls }, "hot");
  probe.stamps = [];
  const t0 = now();
  await live.run(runId);
  const elapsed = since(t0);
  await live.drain(runId); // not timed: the activations queued during the run (see drain)
  const stamps = probe.stamps;
  probe.stamps = undefined;
  if (stamps.length !== calls) throw new Error(`hot run made ${stamps.length} calls, not ${calls}`);
  return { elapsed, calls, intervals: intervals(stamps) };
}

function concat(parts: readonly Float64Array[]): Float64Array {
  const out = new Float64Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * The store's part of each hot-path step timed alone (the same SQL, no executor): a run whose
 * journal was recorded in-process, committed in the executor's batches ([call 2], then
 * [call.result, next call] per tool call), `n` steps at a time.
 */
async function commitAlone(store: Store, script: CompiledScript, steps: number) {
  const sandbox = new Sandbox();
  const runId = newRunId("diag");
  let journal: JournalEntry[];
  try {
    const recorded = await runInProcess({ script, sandbox, input: { n: steps }, toolset, runId });
    journal = recorded.journal;
  } finally {
    sandbox.dispose();
  }
  await store.putScript("default", script);
  await store.createRun({
    started: journal[0] as JournalEntry & { kind: "run.started" },
    ttlMs: 3_600_000,
  });
  const lease = (await store.acquireLease(runId, "bench-diag", 600_000))!;
  const batches: JournalEntry[][] = [[journal[1]!]];
  for (let i = 2; i + 1 < journal.length - 1; i += 2) batches.push([journal[i]!, journal[i + 1]!]);
  let next = 0;
  let afterSeq = 1;
  return async (n: number): Promise<Float64Array> => {
    const samples = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const entries = batches[next++]!;
      const t0 = now();
      // As the executor does: after the first step the run's row needs no update.
      const runRowUnchanged = afterSeq > 1;
      const [outcome] = await store.commit([
        { lease, afterSeq, entries, status: "running", runRowUnchanged },
      ]);
      samples[i] = since(t0);
      if (outcome !== "ok") throw new Error(`diagnostic commit: ${outcome}`);
      afterSeq = entries.at(-1)!.seq;
    }
    return samples;
  };
}

/**
 * The design's own floor: the engine and the sandbox (async, live slices, as in the services)
 * delivering each result, then store.commit of the step, with no executor around them (no
 * activation chain, group committer, metrics or tool wrapper). What the executor adds is the
 * difference; what is left here is the sandbox hop and the fenced INSERT.
 */
async function withoutExecutor(store: Store, script: CompiledScript, calls: number) {
  const runId = await submit(store, script, { n: calls + 1 }, "lean");
  const lease = (await store.acquireLease(runId, "bench-lean", 600_000))!;
  const started = (await store.readJournal(runId))[0] as RunStartedEntry;
  const sandbox = new Sandbox({ mode: "async" });
  const instance = await sandbox.instantiate(script, {
    seed: started.seed,
    startAt: started.at,
    liveSlices: true,
  });
  const { engine, entries } = await RunEngine.resume(instance, [started]);
  const isCall = (e: JournalEntry): e is CallEntry => e.kind === "call";
  let call = entries.find(isCall)!;
  let afterSeq = 1;
  const commit = async (step: JournalEntry[]) => {
    const [outcome] = await store.commit([
      { lease, afterSeq, entries: step, status: "running", runRowUnchanged: true },
    ]);
    if (outcome !== "ok") throw new Error(`lean commit: ${outcome}`);
    afterSeq = step.at(-1)!.seq;
  };
  await commit(entries);
  const take = async (n: number): Promise<Float64Array> => {
    const samples = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const t0 = now();
      const result = (call.args as { i: number }).i;
      const step = await engine.deliver({
        kind: "call.result",
        callSeq: call.seq,
        result,
        at: engine.clock,
      });
      await commit(step);
      samples[i] = since(t0);
      call = step.find(isCall)!;
    }
    return samples;
  };
  return { take, close: () => sandbox.dispose() };
}

/** The network + protocol floor: `SELECT $1`, no write, no fsync. */
async function selectOne(client: pg.Client, n: number): Promise<Float64Array> {
  const samples = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t0 = now();
    await client.query("SELECT $1::int AS one", [i]);
    samples[i] = since(t0);
  }
  return samples;
}

const perCallOf = (runs: readonly HotSample[]) =>
  runs.reduce((n, h) => n + h.elapsed, 0) / runs.reduce((n, h) => n + h.calls, 0);

export async function hotCalls(report: Report, store: Store, client: pg.Client): Promise<void> {
  console.log(
    `\n[1] Tool call round trip in a hot run (live Executor, Postgres) vs one bare INSERT+COMMIT\n` +
      `  ${ROUNDS} interleaved rounds of: ${FLOOR_N} INSERTs, a ${HOT_CALLS}-call run (async), the same (sync), ` +
      `${DIAG_STEPS} store.commit steps alone, ${DIAG_STEPS} SELECTs`,
  );
  await client.query("CREATE TABLE bench_floor (id bigserial PRIMARY KEY, body jsonb)");
  const script = await compile(LOOP, "loop.ts");
  const counted = countingStore(store);
  const async = new LiveExecutor(counted.store, "async", "bench-hot-async");
  const sync = new LiveExecutor(counted.store, "sync", "bench-hot-sync");
  let lean: Awaited<ReturnType<typeof withoutExecutor>> | undefined;
  try {
    const alone = await commitAlone(store, script, (ROUNDS + 1) * DIAG_STEPS + 1);
    lean = await withoutExecutor(store, script, (ROUNDS + 1) * HOT_CALLS);
    // Warm-up: JIT, the pool's connections, the executor's script cache, the tables' first pages.
    await insertFloor(client, WARMUP);
    await hotRun(async, counted.store, script, WARMUP);
    await hotRun(sync, counted.store, script, WARMUP);
    await alone(DIAG_STEPS);
    await lean.take(HOT_CALLS);
    await selectOne(client, WARMUP);

    // Interleaved, so the disk's and the machine's drifts hit every series alike.
    const floors: Float64Array[] = [];
    const hots: HotSample[] = [];
    const syncs: HotSample[] = [];
    const commits: Float64Array[] = [];
    const leans: Float64Array[] = [];
    const selects: Float64Array[] = [];
    const roundRatios: number[] = [];
    let asyncCalls: Map<string, number> = new Map();
    for (let round = 0; round < ROUNDS; round++) {
      floors.push(await insertFloor(client, FLOOR_N));
      counted.counter.reset();
      hots.push(await hotRun(async, counted.store, script, HOT_CALLS));
      for (const [name, n] of counted.counter.calls)
        asyncCalls.set(name, (asyncCalls.get(name) ?? 0) + n);
      syncs.push(await hotRun(sync, counted.store, script, HOT_CALLS));
      commits.push(await alone(DIAG_STEPS));
      leans.push(await lean.take(HOT_CALLS));
      selects.push(await selectOne(client, DIAG_STEPS));
      roundRatios.push(perCallOf([hots[round]!]) / summarize(floors[round]!).mean);
    }
    asyncCalls = new Map([...asyncCalls].map(([k, n]) => [k, n / (ROUNDS * HOT_CALLS)]));

    const floor = summarize(concat(floors));
    const perCall = perCallOf(hots);
    const syncPerCall = perCallOf(syncs);
    const gaps = concat(hots.map((h) => h.intervals));
    const gap = summarize(gaps);
    const syncGaps = concat(syncs.map((h) => h.intervals));
    const syncGap = summarize(syncGaps);
    const commit = summarize(concat(commits));
    const leanCall = summarize(concat(leans));
    const rtt = summarize(concat(selects));

    const floorMeans = floors.map((f) => summarize(f).mean);
    const best = Math.min(...hots.map((h) => perCallOf([h]))) / Math.min(...floorMeans);
    const spread = Math.max(...floorMeans) / Math.min(...floorMeans);
    console.log(line("bare INSERT; COMMIT (autocommit)", floor, us));
    console.log(`  bare INSERT: p90 ${us(percentile(concat(floors), 0.9))}`);
    console.log(
      `  per round, mean INSERT | async per call | sync per call: ` +
        floors
          .map(
            (f, i) =>
              `${us(summarize(f).mean)} | ${us(perCallOf([hots[i]!]))} | ${us(perCallOf([syncs[i]!]))}`,
          )
          .join("; "),
    );
    console.log(
      `  hot runs, async: ${hots.map((h) => ms(h.elapsed)).join(", ")} for ${HOT_CALLS} calls each ` +
        `=> ${us(perCall)} per call (elapsed / calls, activate() to onEnded)`,
    );
    console.log(line("call-to-call interval, async", gap, us));
    console.log(`  call-to-call interval, async: p90 ${us(percentile(gaps, 0.9))}`);
    console.log(
      `  hot runs, sync: ${syncs.map((h) => ms(h.elapsed)).join(", ")} => ${us(syncPerCall)} per call`,
    );
    console.log(line("call-to-call interval, sync", syncGap, us));
    console.log(
      `  store calls per tool call (async runs, queued activations drained): ${[...asyncCalls]
        .map(([name, n]) => `${name} ${n.toFixed(3)}`)
        .join(", ")}`,
    );
    console.log(line("store.commit([call.result, call])", commit, us));
    console.log(line("engine + sandbox + store.commit, no executor", leanCall, us));
    console.log(line("SELECT $1 (round trip, no commit)", rtt, us));
    console.log(
      `  per call: store.commit alone ${us(commit.mean)} (${ratio(commit.mean, floor.mean)} the INSERT); ` +
        `the executor + sandbox + event loop add ${us(perCall - commit.mean)} (async) / ` +
        `${us(syncPerCall - commit.mean)} (sync)`,
    );
    console.log(
      `  ratios: async hot/floor ${ratio(perCall, floor.mean)} (means), ${ratio(gap.median, floor.median)} (medians); ` +
        `per round ${roundRatios.map((r) => r.toFixed(2)).join(", ")}; ` +
        `sync hot/floor ${ratio(syncPerCall, floor.mean)} (means), ${ratio(syncGap.median, floor.median)} (medians)`,
    );

    console.log(
      `  best round of each (least disturbed): async/floor ${ratio(best, 1)}; the floor's round means ` +
        `vary ${ratio(spread, 1)}` +
        (spread > 2
          ? ": WARNING, the disk or the machine is busy (other fsyncs inflate both sides alike and " +
            "pull the ratio towards 1): rerun on a quiet machine"
          : ""),
    );
    report.check(
      "1. tool call (async) / bare INSERT+COMMIT, means",
      `${ratio(perCall, floor.mean)}`,
      `≤ ${TARGET_RATIO}×`,
      perCall / floor.mean <= TARGET_RATIO,
    );
    report.info("1. bare INSERT+COMMIT, median / mean", `${us(floor.median)} / ${us(floor.mean)}`);
    report.info("1. hot tool call async, elapsed/calls", us(perCall));
    report.info(
      "1. hot call async, interval p50/p90/p99",
      `${us(gap.median)}/${us(percentile(gaps, 0.9))}/${us(gap.p99)}`,
    );
    report.info("1. ratio of medians (interval / INSERT), async", ratio(gap.median, floor.median));
    report.info("1. ratio per round (async), median", ratio(summarize(roundRatios).median, 1));
    report.info("1. ratio of best rounds (async)", ratio(best, 1));
    report.info("1. floor's round means, max/min (noise)", ratio(spread, 1));
    report.info("1. hot tool call sync, elapsed/calls", us(syncPerCall));
    report.info("1. ratio of means, sync", ratio(syncPerCall, floor.mean));
    report.info("1. store.commit of one step alone, mean", us(commit.mean));
    report.info("1. store.commit alone / INSERT, means", ratio(commit.mean, floor.mean));
    report.info("1. without the executor (engine+sandbox+commit), mean", us(leanCall.mean));
    report.info("1. without the executor / INSERT, means", ratio(leanCall.mean, floor.mean));
    report.info("1. SELECT $1 round trip, median", us(rtt.median));
  } finally {
    lean?.close();
    await async.close();
    await sync.close();
  }
}

const GROUP_RUNS = 50;
const GROUP_CALLS = 50;

/** Information: many runs through one Executor share commits (group commit). */
export async function groupCommit(report: Report, store: Store): Promise<void> {
  console.log(
    `\n[4] Group commit (information): ${GROUP_RUNS} concurrent runs × ${GROUP_CALLS} calls through one Executor (async)`,
  );
  const script = await compile(LOOP, "loop.ts");
  const counted = countingStore(store);
  const live = new LiveExecutor(counted.store, "async", "bench-group");
  try {
    const runIds: string[] = [];
    for (let i = 0; i < GROUP_RUNS; i++)
      runIds.push(await submit(store, script, { n: GROUP_CALLS }, "group"));
    counted.counter.reset();
    const t0 = now();
    await Promise.all(runIds.map((id) => live.run(id)));
    const elapsed = since(t0) / 1e9;
    const commits = counted.counter.count("commit");
    await Promise.all(runIds.map((id) => live.drain(id)));
    const calls = GROUP_RUNS * GROUP_CALLS;
    console.log(
      `  ${calls} calls in ${(elapsed * 1000).toFixed(0)} ms: ${int(calls / elapsed)} calls/s, ` +
        `${int(commits / elapsed)} commits/s (${commits} commits carrying ${counted.counter.appends} appends, ` +
        `${(counted.counter.appends / commits).toFixed(1)} per commit)`,
    );
    console.log(
      `  store calls, run ends' queued activations included: ${[...counted.counter.calls].map(([n, c]) => `${n} ${c}`).join(", ")}`,
    );
    report.info("4. group commit: calls/s (50 runs × 50)", int(calls / elapsed));
    report.info("4. group commit: commits/s", int(commits / elapsed));
    report.info(
      "4. group commit: appends per commit",
      (counted.counter.appends / commits).toFixed(1),
    );
  } finally {
    await live.close();
  }
}
