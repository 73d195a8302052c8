/**
 * --count-queries: each API and worker process counts the Postgres queries and Redis commands it
 * sends (query-counter.mjs) and writes them on SIGUSR2. Two snapshots around a workload give its
 * round trips per run, by statement: the measure of what a run costs the database and Redis.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { int } from "../sandbox/stats.js";

export type Counts = Map<string, number>;

/** Asks every child for its counts: name → (statement → count). */
export async function snapshotCounts(
  children: ReadonlyMap<string, number>,
  dir: string,
): Promise<Map<string, Counts>> {
  const out = new Map<string, Counts>();
  await Promise.all(
    [...children].map(async ([name, pid]) => {
      const file = path.join(dir, `counts-${pid}.json`);
      rmSync(file, { force: true });
      process.kill(pid, "SIGUSR2");
      for (let i = 0; i < 200; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        if (!existsSync(file)) continue;
        try {
          const counts = JSON.parse(readFileSync(file, "utf8")) as Record<string, number>;
          out.set(name, new Map(Object.entries(counts)));
          return;
        } catch {
          // caught mid-write: read again
        }
      }
      throw new Error(`${name} (pid ${pid}) wrote no counts to ${file} within 2 s of SIGUSR2`);
    }),
  );
  return out;
}

/** Prints, for the API and for the workers together, round trips per `unit` by statement. */
export function printCounts(
  before: Map<string, Counts>,
  after: Map<string, Counts>,
  units: number,
  unit: string,
  top = 8,
): void {
  const groups = new Map<string, Counts>();
  for (const [name, counts] of after) {
    const group = name.startsWith("worker") ? "workers" : name;
    const sum = groups.get(group) ?? new Map<string, number>();
    const was = before.get(name) ?? new Map<string, number>();
    for (const [key, n] of counts) sum.set(key, (sum.get(key) ?? 0) + n - (was.get(key) ?? 0));
    groups.set(group, sum);
  }
  for (const [group, counts] of groups) {
    const kinds = (prefix: string) =>
      [...counts].filter(([k]) => k.startsWith(prefix)).reduce((s, [, n]) => s + n, 0);
    console.log(
      `  ${group}: ${(kinds("pg:") / units).toFixed(1)} Postgres queries and ` +
        `${(kinds("redis:") / units).toFixed(1)} Redis commands a ${unit}`,
    );
    for (const [key, n] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, top))
      if (n > 0) console.log(`    ${(n / units).toFixed(2).padStart(7)}  ${key}  (${int(n)})`);
  }
}
