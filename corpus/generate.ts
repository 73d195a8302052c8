/**
 * Records the corpus of a determinism epoch: each script of corpus/scripts/ run once by the real
 * engine (runInProcess, as `rewind exec --journal` does), written to corpus/epoch-N/ as
 *   <name>.ts           the script, as it was recorded
 *   <name>.script.json  its compiled form (what a run's scriptHash names and what replays run)
 *   <name>.jsonl        its journal file
 * plus manifest.json. CI replays every supported epoch's corpus and requires an exact match
 * (libs/executor/test/corpus.test.ts).
 *
 * NEVER run it for a released epoch: a released corpus is what that epoch's runs look like, and
 * regenerating it would only hide a change that breaks them. It refuses to overwrite a folder.
 * Run it once, when an epoch is released, on that epoch's runtime (the epoch must be the one this
 * runtime's new runs start in, newRunEpoch(): Node 20's 2, Node 24's 3, Node 26's 4):
 *
 *   npx turbo run build && node --import ./load-tests/register.mjs corpus/generate.ts <epoch>
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Json } from "@rewind/core";
import { runInProcess, type ScheduledSignal } from "@rewind/executor";
import { toJournalFile } from "@rewind/journal";
import {
  Sandbox,
  compileScript,
  epochSupport,
  findEpoch,
  isDraft,
  newRunEpoch,
} from "@rewind/sandbox";
import tools from "./scripts/tools.js";

interface Case {
  name: string;
  input?: Json;
  signals?: ScheduledSignal[];
  /** Virtual ms a call takes, by tool name (default 0). */
  latency?: Record<string, number>;
  /** The status the recorded run must reach. */
  expect: "completed" | "failed" | "waiting";
}

const CASES: Case[] = [
  { name: "clock", latency: { echo: 250 }, expect: "completed" },
  { name: "random", expect: "completed" },
  { name: "timers", expect: "completed" },
  { name: "races", latency: { echo: 5_000, add: 100 }, expect: "completed" },
  {
    name: "signals",
    signals: [
      { afterMs: 60_000, name: "approval", payload: { approved: true } },
      { afterMs: 2 * 3_600_000, name: "late", payload: "too late" },
      { afterMs: 3_600_000 * 30, name: "early", payload: { n: 7 } },
      { afterMs: 3 * 86_400_000, name: "go" },
    ],
    expect: "completed",
  },
  { name: "output", input: { name: "Ada" }, expect: "completed" },
  { name: "errors", input: { orderId: "A-17" }, expect: "failed" },
  { name: "uncaught-call-error", expect: "failed" },
  {
    name: "large-values",
    input: { fill: "rewind " },
    signals: [{ afterMs: 1_000, name: "upload", payload: { blob: "b".repeat(80 * 1024) } }],
    expect: "completed",
  },
  { name: "fetch", expect: "completed" },
  { name: "intl", expect: "completed" },
  { name: "verdicts", expect: "failed" },
  { name: "waiting", input: { customer: "Grace" }, expect: "waiting" },
  { name: "math-e", expect: "completed" },
  { name: "date-statics", expect: "completed" },
];

/**
 * Cases recorded after their epoch's release, on its runtime, for behaviour its corpus did not
 * cover, into corpus/epoch-N-addenda/ (epoch-N/ itself is never edited). Each is recorded once.
 */
const ADDENDA: Record<number, string[]> = { 1: ["math-e"] };

/** One fixed seed per epoch's corpus: the journals depend on nothing but the platform. */
const SEED = "c0ffee".padEnd(64, "0");

async function main(): Promise<void> {
  const epoch = Number(process.argv[2]);
  const addenda = process.argv[3] === "--addenda";
  if (!Number.isInteger(epoch) || epoch < 1)
    throw new Error(
      "usage: generate.ts <epoch> (the epoch being released), or generate.ts <epoch> --addenda",
    );
  const root = path.dirname(fileURLToPath(import.meta.url));
  if (addenda) return recordAddenda(root, epoch);
  // Each runtime records its own epoch's corpus: the epoch its new runs start in, released.
  if (epoch !== newRunEpoch())
    throw new Error(
      `epoch ${epoch} is not the epoch this runtime's new runs start in (${newRunEpoch()}, on Node ` +
        `${process.versions.node}): a corpus is recorded on its own epoch's runtime, by the build that releases it`,
    );
  if (isDraft(findEpoch(epoch)!))
    throw new Error(`epoch ${epoch} is a draft: release it (its row's \`released\` day) first`);
  const out = path.join(root, `epoch-${epoch}`);
  if (existsSync(out))
    throw new Error(
      `${out} exists: a released epoch's corpus is never regenerated. Release a new epoch instead`,
    );
  mkdirSync(out);
  const manifest = await record(root, out, epoch, CASES);
  writeFileSync(
    path.join(out, "manifest.json"),
    `${JSON.stringify({ epoch, recorded: new Date().toISOString().slice(0, 10), cases: manifest }, null, 2)}\n`,
  );
}

/** Records epoch's addenda not recorded yet, on the epoch's own runtime, adding them to the manifest. */
async function recordAddenda(root: string, epoch: number): Promise<void> {
  const support = epochSupport({ claims: [epoch] });
  if (!support.epochs.includes(epoch))
    throw new Error(
      `this process cannot record epoch ${epoch}'s addenda: ${support.refused.map((r) => r.reason).join("; ")}`,
    );
  const out = path.join(root, `epoch-${epoch}-addenda`);
  mkdirSync(out, { recursive: true });
  const manifestFile = path.join(out, "manifest.json");
  const previous = existsSync(manifestFile)
    ? (JSON.parse(readFileSync(manifestFile, "utf8")) as { cases: { name: string }[] }).cases
    : [];
  const names = (ADDENDA[epoch] ?? []).filter((n) => !previous.some((c) => c.name === n));
  const cases = CASES.filter((c) => names.includes(c.name));
  const recorded = await record(root, out, epoch, cases);
  writeFileSync(
    manifestFile,
    `${JSON.stringify({ epoch, cases: [...previous, ...recorded] }, null, 2)}\n`,
  );
}

async function record(
  root: string,
  out: string,
  epoch: number,
  cases: readonly Case[],
): Promise<{ name: string; status: string; entries: number; recorded: string }[]> {
  const sandbox = new Sandbox();
  const manifest = [];
  try {
    for (const c of cases) {
      if (existsSync(path.join(out, `${c.name}.jsonl`)))
        throw new Error(`${out}/${c.name}.jsonl exists: a recorded case is never regenerated`);
      copyFileSync(path.join(root, "scripts", `${c.name}.ts`), path.join(out, `${c.name}.ts`));
      const script = await compileScript({ file: path.join(out, `${c.name}.ts`) });
      const latency = c.latency ?? {};
      const result = await runInProcess({
        script,
        sandbox,
        toolset: tools,
        input: c.input ?? null,
        seed: SEED,
        epoch,
        signals: c.signals ?? [],
        latency: (call) => latency[call.name] ?? 0,
      });
      if (result.status !== c.expect)
        throw new Error(`${c.name} ended ${result.status}, expected ${c.expect}`);
      writeFileSync(path.join(out, `${c.name}.script.json`), `${JSON.stringify(script)}\n`);
      writeFileSync(path.join(out, `${c.name}.jsonl`), toJournalFile(result.journal));
      const recorded = `${process.version} on ${new Date().toISOString().slice(0, 10)}`;
      manifest.push({
        name: c.name,
        status: result.status,
        entries: result.journal.length,
        recorded,
      });
      process.stdout.write(`${c.name}: ${result.status}, ${result.journal.length} entries\n`);
    }
  } finally {
    sandbox.dispose();
  }
  return manifest;
}

await main();
