// Diagnostics for --count-queries, loaded into the API and workers with `node --import`: counts
// every Postgres query (by its SQL's first words) and Redis command (by name) the process sends,
// and writes the counts so far to $REWIND_BENCH_COUNTS_DIR/counts-<pid>.json on SIGUSR2. The
// harness takes a snapshot before and after a workload: the difference is its round trips.
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.cwd(), "package.json"));
const counts = {};
const bump = (key) => (counts[key] = (counts[key] ?? 0) + 1);

const pg = require("pg");
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (config, ...rest) {
  const text = typeof config === "string" ? config : (config?.text ?? "");
  bump(`pg: ${text.replace(/\s+/g, " ").trim().slice(0, 80)}`);
  return query.call(this, config, ...rest);
};

const { Redis } = require("ioredis");
const sendCommand = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function (command, ...rest) {
  bump(`redis: ${command?.name ?? "?"}`);
  return sendCommand.call(this, command, ...rest);
};

const dir = process.env.REWIND_BENCH_COUNTS_DIR;
process.on("SIGUSR2", () => {
  if (dir) writeFileSync(path.join(dir, `counts-${process.pid}.json`), JSON.stringify(counts));
});
