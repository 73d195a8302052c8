/**
 * Information for figure 1: what work between two commits costs the second one on this machine.
 * The floor's INSERTs follow each other at once; a hot run's commits are separated by the tool,
 * the sandbox and the executor. Here the same INSERT (and a bare fdatasync of the disk, no
 * Postgres) follows G µs of busy work in this process, for a few G, interleaved: if the commit
 * itself gets slower after a gap, part of a hot call's excess over the floor is the machine's
 * (a virtual disk or vCPU that idles), not work Rewind does.
 */
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type pg from "pg";
import { Report, now, since, summarize, us } from "../sandbox/stats.js";
import { ratio } from "./stats.js";

const GAPS_US = [0, 100, 250];
const ROUNDS = 5;
const PER_ROUND = 150;

/** Busy for `ns`, as code on the hot path would be (not asleep: the CPU stays in use). */
function work(ns: number): void {
  const t0 = now();
  while (since(t0) < ns);
}

export async function idleGap(report: Report, client: pg.Client): Promise<void> {
  console.log(
    `\n[1b] What a gap before a commit costs on this machine (information): ${ROUNDS} interleaved ` +
      `rounds of ${PER_ROUND} INSERTs, then ${PER_ROUND} fdatasyncs of 8 KiB, after ${GAPS_US.join(" / ")} µs of work`,
  );
  await client.query("CREATE TABLE IF NOT EXISTS bench_gap (id bigserial PRIMARY KEY, body jsonb)");
  const dir = mkdtempSync(path.join(tmpdir(), "rewind-bench-fsync-"));
  const fd = openSync(path.join(dir, "wal"), "w");
  const page = Buffer.alloc(8192, 1);
  const inserts = new Map<number, number[]>();
  const syncs = new Map<number, number[]>();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const gap of GAPS_US) {
        const insert = inserts.get(gap) ?? inserts.set(gap, []).get(gap)!;
        for (let i = 0; i < PER_ROUND; i++) {
          work(gap * 1000);
          const t0 = now();
          await client.query("INSERT INTO bench_gap (body) VALUES ($1)", [JSON.stringify({ i })]);
          insert.push(since(t0));
        }
        const sync = syncs.get(gap) ?? syncs.set(gap, []).get(gap)!;
        for (let i = 0; i < PER_ROUND; i++) {
          work(gap * 1000);
          const t0 = now();
          writeSync(fd, page, 0, page.length, (i % 16) * page.length);
          fdatasyncSync(fd);
          sync.push(since(t0));
        }
      }
    }
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
  const mean = (xs: number[]) => summarize(Float64Array.from(xs)).mean;
  const base = mean(inserts.get(0)!);
  const syncBase = mean(syncs.get(0)!);
  for (const gap of GAPS_US) {
    const insert = mean(inserts.get(gap)!);
    const sync = mean(syncs.get(gap)!);
    console.log(
      `  after ${String(gap).padStart(3)} µs of work: INSERT ${us(insert)} (${ratio(insert, base)}), ` +
        `fdatasync ${us(sync)} (${ratio(sync, syncBase)})`,
    );
    if (gap > 0) {
      report.info(`1b. INSERT after ${gap} µs of work / back to back`, ratio(insert, base));
      report.info(`1b. fdatasync after ${gap} µs of work / back to back`, ratio(sync, syncBase));
    }
  }
}
