/**
 * Durable-execution benchmarks on a real Postgres server (a fresh database, dropped at the end):
 *   1. a tool call round trip in a hot run vs one bare INSERT+COMMIT (`calls`), and what a gap
 *      of other work before a commit costs that commit on this machine (`gap`, information)
 *   2. cold replay of a run with 10,000 journaled calls, journal read from Postgres (`replay`)
 *   3. `rewind run examples/hello.ts --wait` against a running `rewind dev` (`cli`): dev on its
 *      embedded default (PGlite), then on Postgres (a second fresh database)
 *   4. the group-commit effect, for information (`group`)
 * Run with `npm run bench:durable -w load-tests` (after `npm run build`); `-- replay` runs one.
 * Postgres: TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres. Exits 1 if a
 * target is missed, or if the server's synchronous_commit is not on (it is never changed here).
 */
import { Report } from "../sandbox/stats.js";
import { cliRun } from "./cli.js";
import { coldReplay } from "./cold-replay.js";
import { openBenchDatabase, type BenchDatabase } from "./db.js";
import { groupCommit, hotCalls } from "./hot-run.js";
import { idleGap } from "./idle-gap.js";

const DEADLINE_MS = 170_000; // the whole benchmark must end by itself in under 3 minutes

const report = new Report();
const t0 = Date.now();
console.log(
  `Rewind durable-execution benchmarks: node ${process.version}, ${process.platform}/${process.arch}`,
);

const figures = {
  calls: (db: BenchDatabase) => hotCalls(report, db.store, db.client),
  gap: (db: BenchDatabase) => idleGap(report, db.client),
  group: (db: BenchDatabase) => groupCommit(report, db.store),
  replay: (db: BenchDatabase) => coldReplay(report, db.store, db.client),
  cli: () => cliRun(report),
};
const picked = process.argv.slice(2);
for (const name of picked) {
  if (!(name in figures))
    throw new Error(`unknown figure ${name}: pick from ${Object.keys(figures).join(", ")}`);
}

let db: BenchDatabase | undefined;
let failure: unknown;
const watchdog = setTimeout(() => {
  console.error(`\nThe benchmark did not finish in ${DEADLINE_MS / 1000} s: giving up`);
  void (db?.close() ?? Promise.resolve()).finally(() => process.exit(1));
}, DEADLINE_MS);
watchdog.unref();
process.once("SIGINT", () => {
  void (db?.close() ?? Promise.resolve()).finally(() => process.exit(130));
});

try {
  db = await openBenchDatabase();
  const s = db.settings;
  console.log(
    `Postgres ${s.server_version}, fresh database ${new URL(db.url).pathname.slice(1)}: ` +
      `SHOW synchronous_commit = ${s.synchronous_commit}; fsync = ${s.fsync}; ` +
      `wal_sync_method = ${s.wal_sync_method}; commit_delay = ${s.commit_delay}`,
  );
  report.check(
    "0. server synchronous_commit",
    s.synchronous_commit!,
    "on",
    s.synchronous_commit === "on",
  );
  for (const [name, run] of Object.entries(figures)) {
    if (picked.length === 0 || picked.includes(name)) await run(db);
  }
} catch (error) {
  failure = error;
  console.error(`\nThe benchmark failed: ${(error as Error).stack ?? String(error)}`);
} finally {
  await db
    ?.close()
    .catch((error: unknown) => console.error(`dropping the database: ${String(error)}`));
}

report.print();
const failed = report.failed + (failure === undefined ? 0 : 1);
console.log(
  `\n${failed === 0 ? "All targets met" : `${report.failed} target(s) missed${failure === undefined ? "" : ", and the benchmark failed"}`} ` +
    `in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
);
process.exit(failed === 0 ? 0 : 1);
