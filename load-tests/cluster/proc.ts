/**
 * Readings from Linux's /proc: a process's resident memory, and CPU time per component (the API,
 * each worker, Postgres, Redis, the harness itself) over a workload, which shows where the two
 * cores went. Postgres and Redis are shared with other engineers' work on this machine: their
 * figures are "this database's backends" where that can be told apart, and "all" otherwise.
 */
import { readFileSync, readdirSync } from "node:fs";
import { loadavg } from "node:os";

const TICKS_PER_SECOND = 100; // getconf CLK_TCK on Linux

export interface Memory {
  rssBytes: number;
  /** The peak resident size so far (VmHWM). */
  peakBytes: number;
}

export function memoryOf(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0);
  return { rssBytes: kb("VmRSS") * 1024, peakBytes: kb("VmHWM") * 1024 };
}

/** CPU seconds (user + system) a process has used, or undefined if it is gone. */
export function cpuOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces) start at the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** The pids of a process's children (a worker's sandbox processes). */
export function childPids(parent: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // After the command name: state, then the parent's pid.
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === parent)
        out.push(Number(name));
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

/** CPU seconds of every process with this command name (`postgres`, `redis-server`), by pid. */
export function cpuByCommand(command: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      if (stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")) !== command) continue;
      const cpu = cpuOf(Number(name));
      if (cpu !== undefined) out.set(Number(name), cpu);
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

/** The whole machine's busy CPU seconds (all processes, everyone's), from /proc/stat. */
function machineBusy(): number {
  const fields = readFileSync("/proc/stat", "utf8")
    .split("\n")[0]!
    .trim()
    .split(/\s+/)
    .slice(1, 9)
    .map(Number);
  const [user, nice, system, , , irq, softirq, steal] = fields as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return (user + nice + system + irq + softirq + steal) / TICKS_PER_SECOND;
}

export interface CpuSnapshot {
  at: number;
  machine: number;
  children: Map<string, { pid: number; cpu: number }>;
  postgres: Map<number, number>;
  redis: Map<number, number>;
  harness: number;
}

export function snapshotCpu(children: ReadonlyMap<string, number>): CpuSnapshot {
  const out = new Map<string, { pid: number; cpu: number }>();
  for (const [name, pid] of children) out.set(name, { pid, cpu: cpuOf(pid) ?? 0 });
  const self = process.cpuUsage();
  return {
    at: performance.now(),
    machine: machineBusy(),
    children: out,
    postgres: cpuByCommand("postgres"),
    redis: cpuByCommand("redis-server"),
    harness: (self.user + self.system) / 1e6,
  };
}

/**
 * Cores used by each component between two snapshots (CPU seconds / wall seconds). `benchPids`
 * are the Postgres backends serving the bench database (from pg_stat_activity).
 */
export function coresUsed(
  before: CpuSnapshot,
  after: CpuSnapshot,
  benchPids: ReadonlySet<number>,
): CpuUse[] {
  const wall = (after.at - before.at) / 1000;
  const rows: CpuUse[] = [];
  const push = (name: string, seconds: number) =>
    rows.push({ name, seconds, cores: seconds / wall });
  for (const [name, { pid, cpu }] of after.children) {
    const start = before.children.get(name);
    push(name, start?.pid === pid ? cpu - start.cpu : cpu);
  }
  const delta = (a: Map<number, number>, b: Map<number, number>, only?: ReadonlySet<number>) => {
    let sum = 0;
    for (const [pid, cpu] of b)
      if (only === undefined || only.has(pid)) sum += cpu - (a.get(pid) ?? 0);
    return sum;
  };
  push(BENCH_POSTGRES, delta(before.postgres, after.postgres, benchPids));
  push("postgres (all, shared)", delta(before.postgres, after.postgres));
  push("redis (shared)", delta(before.redis, after.redis));
  push("harness", after.harness - before.harness);
  push("machine (everyone)", after.machine - before.machine);
  return rows;
}

export const BENCH_POSTGRES = "postgres (bench db backends)";

export interface CpuUse {
  name: string;
  /** CPU seconds used in the window. */
  seconds: number;
  /** Cores used on average (seconds / wall seconds). */
  cores: number;
}

export function formatCores(rows: readonly CpuUse[]): string {
  return (
    rows.map((r) => `${r.name} ${r.cores.toFixed(2)}`).join(", ") +
    `; load average ${loadavg()[0]!.toFixed(1)}`
  );
}
