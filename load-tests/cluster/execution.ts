/**
 * How a batch of tool-calling runs was executed, measured the same way for W1 and its drain:
 * journaled calls per second (sustained: the middle 80% of the call.result times), the workers'
 * commits (rows written by one transaction share its xmin), what the workers' /metrics say, the
 * CPU each process spent per call and the rate two idle cores would allow at that cost, and with
 * --count-queries the round trips per run.
 */
import { int } from "../sandbox/stats.js";
import { printCounts, snapshotCounts, type Counts } from "./counts.js";
import { clusterDelta, delta, scrapeAll, type Samples } from "./metrics.js";
import { entryTimes, workerCommits } from "./observe.js";
import type { Platform } from "./platform.js";
import { fmtMs, percentile, rate } from "./print.js";
import { monotonicUs } from "./profile-summary.js";
import { printPgStats, snapshotPgStats, type PgStats } from "./pg-stats.js";
import { BENCH_POSTGRES, coresUsed, formatCores, snapshotCpu, type CpuSnapshot } from "./proc.js";

export const us = (seconds: number): string => `${(seconds * 1e6).toFixed(0)} µs`;

export interface Execution {
  /** Journaled calls per second over the middle 80% of them. */
  sustained: number;
  /** The first and last call.result times (ms). */
  firstMs: number;
  lastMs: number;
  commits: number;
  entries: number;
  /** CPU seconds per journaled call, by process. */
  perCall: { api: number; workers: number; projector: number; postgres: number; total: number };
  /** 2 cores ÷ CPU per call: the most two otherwise idle cores would allow. */
  ceiling: number;
}

/** The workers' group commits between two scrapes: how many, and their mean duration. */
function commitMean(before: Map<string, Samples>, after: Map<string, Samples>) {
  let count = 0;
  let sum = 0;
  for (const [worker, samples] of after) {
    const was = before.get(worker) ?? new Map<string, number>();
    count += delta(was, samples, "rewind_executor_commit_duration_seconds_count");
    sum += delta(was, samples, "rewind_executor_commit_duration_seconds_sum");
  }
  return { count, meanMs: count > 0 ? (sum / count) * 1000 : 0 };
}

export class Measuring {
  private constructor(
    private readonly platform: Platform,
    private readonly counts: Map<string, Counts> | undefined,
    private readonly metrics: Map<string, Samples>,
    private readonly cpu: CpuSnapshot,
    private readonly pgStats: PgStats | undefined,
    private readonly fromUs = monotonicUs(),
  ) {}

  /** Takes the "before" readings. */
  static async start(
    platform: Platform,
    countQueries: boolean,
    pgStats = false,
  ): Promise<Measuring> {
    const counts = countQueries
      ? await snapshotCounts(platform.pids(), platform.countsDir)
      : undefined;
    const metrics = await scrapeAll(platform.workerMetrics());
    const statements = pgStats ? await snapshotPgStats(platform.db) : undefined;
    return new Measuring(platform, counts, metrics, snapshotCpu(platform.cpuPids()), statements);
  }

  /** Takes the "after" readings for these runs (all ended), prints them and returns the figures. */
  async finish(what: string, ids: readonly string[], calls: number): Promise<Execution> {
    const { platform } = this;
    platform.profileWindows.push({ label: what, fromUs: this.fromUs, toUs: monotonicUs() });
    const cores = coresUsed(
      this.cpu,
      snapshotCpu(platform.cpuPids()),
      await platform.backendPids(),
    );
    const metrics = await scrapeAll(platform.workerMetrics());
    if (this.counts) {
      console.log("  round trips (--count-queries):");
      const after = await snapshotCounts(platform.pids(), platform.countsDir);
      printCounts(this.counts, after, ids.length, "run");
    }
    if (this.pgStats) printPgStats(this.pgStats, await snapshotPgStats(platform.db), calls, "call");
    const results = await entryTimes(platform.db, ids, "call.result");
    if (results.length !== calls)
      throw new Error(
        `${what}: ${results.length} call.result entries journaled, expected ${calls}`,
      );
    const lo = percentile(results, 0.1);
    const hi = percentile(results, 0.9);
    const sustained = (0.8 * results.length) / ((hi - lo) / 1000);
    const { commits, entries } = await workerCommits(platform.db, ids);
    console.log(
      `  worker commits: ${int(commits)} transactions for ${int(entries)} journal entries ` +
        `(${(entries / commits).toFixed(1)} entries, ${(calls / commits).toFixed(2)} tool calls a commit)`,
    );
    const commitMs = commitMean(this.metrics, metrics);
    const activations = (kind: string) =>
      clusterDelta(this.metrics, metrics, "rewind_executor_activations_total", `kind="${kind}"`);
    console.log(
      `  inside the workers (/metrics): ${int(commitMs.count)} group commits, mean ${fmtMs(commitMs.meanMs)}; ` +
        `activations: ${int(activations("hot"))} hot, ${int(activations("cold"))} cold`,
    );
    console.log(`  CPU, cores (of 2): ${formatCores(cores)}`);
    // CPU per call is the figure least disturbed by other work on the machine: what the
    // platform's processes spent per journaled call, and the rate two idle cores would allow.
    const spent = (match: (name: string) => boolean) =>
      cores.filter((r) => match(r.name)).reduce((sum, r) => sum + r.seconds, 0) / calls;
    const api = spent((n) => n === "api");
    const workers = spent((n) => n.startsWith("worker"));
    const projector = spent((n) => n === "projector");
    const postgres = spent((n) => n === BENCH_POSTGRES);
    const total = api + workers + projector + postgres;
    const ceiling = 2 / total;
    const projecting = projector > 0 ? `, projector ${us(projector)}` : "";
    console.log(
      `  CPU per journaled tool call: api ${us(api)}, workers ${us(workers)}${projecting}, postgres ${us(postgres)} ` +
        `= ${us(total)}: two idle cores would allow at most ${rate(ceiling, "calls")}`,
    );
    return {
      sustained,
      firstMs: results[0]!,
      lastMs: results[results.length - 1]!,
      commits,
      entries,
      perCall: { api, workers, projector, postgres, total },
      ceiling,
    };
  }
}
