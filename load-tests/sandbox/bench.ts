/**
 * Sandbox benchmarks: tool-call overhead, replay speed, run start-up and idle-run memory.
 * Run with `npm run bench` at the root (after `npm run build`; it runs these, then durable/), or
 * `npm run bench:sandbox -w load-tests` for these alone. Exits 1 if a target is missed.
 * Figures: memory (4), calls (1), replay (2), startup (3); `-- replay` after bench:sandbox runs one.
 */
import { hotCalls } from "./hot-calls.js";
import { idleMemory } from "./idle-memory.js";
import { replaySpeed } from "./replay.js";
import { startup } from "./startup.js";
import { Report } from "./stats.js";

const report = new Report();
const t0 = Date.now();
console.log(
  `Rewind sandbox benchmarks: node ${process.version}, ${process.platform}/${process.arch}`,
);

// Memory first, while the process is fresh: RSS is then least disturbed by earlier garbage.
// Arguments pick figures by name (`npm run bench:sandbox -- replay`); none runs them all.
const figures = { memory: idleMemory, calls: hotCalls, replay: replaySpeed, startup };
const picked = process.argv.slice(2);
for (const name of picked) {
  if (!(name in figures))
    throw new Error(`unknown figure ${name}: pick from ${Object.keys(figures).join(", ")}`);
}
for (const [name, run] of Object.entries(figures)) {
  if (picked.length === 0 || picked.includes(name)) await run(report);
}

report.print();
console.log(
  `\n${report.failed === 0 ? "All targets met" : `${report.failed} target(s) missed`} in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
);
process.exit(report.failed === 0 ? 0 : 1);
