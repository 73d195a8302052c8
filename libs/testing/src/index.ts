/**
 * `@rewind/testing` (also `@rewind/sdk/testing`): run a script in virtual time, against a cassette (a real run's journal
 * file: each tool call answered as it was) or against mock tools. A ten-day workflow runs in
 * milliseconds; works in any test runner (vitest, node:test …).
 */
import { readFileSync } from "node:fs";
import {
  defineToolset,
  type Json,
  type JournalEntry,
  type ToolDefinition,
  type ToolFunction,
} from "@rewind/core";
import { runInProcess, type InProcessResult, type ScheduledSignal } from "@rewind/executor";
import { parseJournalFile } from "@rewind/journal";
import { Sandbox, compileScript, type CompiledScript } from "@rewind/sandbox";
import { CassetteMissError, CassettePlayer } from "./cassette.js";

export { CassetteMissError } from "./cassette.js";

export interface TestRun extends InProcessResult {
  /** Output lines the script printed, in order. */
  output: string[];
}

type ScriptInput = string | CompiledScript;

async function compiled(script: ScriptInput): Promise<CompiledScript> {
  return typeof script === "string" ? compileScript({ file: script }) : script;
}

let shared: Sandbox | undefined;
function sandbox(): Sandbox {
  // This harness launches runs in the test's own process, as bin/rewind.mjs does in the CLI's: it
  // pins the zone epoch 1 was recorded in (the sandbox itself changes nothing of its process).
  if (shared === undefined) process.env.TZ = "UTC";
  return (shared ??= new Sandbox());
}

function collect(result: InProcessResult): TestRun {
  const output = result.journal.flatMap((e) => (e.kind === "output" ? [e.text] : []));
  return { ...result, output };
}

/**
 * Runs `script` against a cassette: by default with the recorded run's input, seed, start time
 * and signals, so a faithful script reproduces the run. Throws CassetteMissError when the script
 * makes a call the cassette does not hold, naming the nearest recorded one.
 */
export async function runWithCassette(options: {
  script: ScriptInput;
  cassette: string | readonly JournalEntry[];
  input?: Json;
}): Promise<TestRun> {
  const journal =
    typeof options.cassette === "string"
      ? parseJournalFile(readFileSync(options.cassette, "utf8"), options.cassette)
      : options.cassette;
  const started = journal[0];
  if (started?.kind !== "run.started") throw new TypeError("a cassette begins with run.started");
  const player = new CassettePlayer(journal);
  const signals: ScheduledSignal[] = journal.flatMap((e) =>
    e.kind === "signal" ? [{ afterMs: e.at - started.at, name: e.name, payload: e.payload }] : [],
  );
  const result = await runInProcess({
    script: await compiled(options.script),
    sandbox: sandbox(),
    toolset: player.toolset,
    input: options.input ?? started.input,
    seed: started.seed,
    startAt: started.at,
    signals,
    // A call takes the virtual time its recorded twin took.
    latency: (call) => player.latency(call),
  });
  if (player.misses.length > 0) throw new CassetteMissError(player.misses[0]);
  return collect(result);
}

/** Runs `script` with mock tools, in virtual time. */
export async function runWithMocks(options: {
  script: ScriptInput;
  tools?: Record<string, ToolDefinition | ToolFunction>;
  input?: Json;
  seed?: string;
  signals?: ScheduledSignal[];
}): Promise<TestRun> {
  const result = await runInProcess({
    script: await compiled(options.script),
    sandbox: sandbox(),
    toolset: defineToolset("mock", options.tools ?? {}),
    input: options.input ?? null,
    ...(options.seed ? { seed: options.seed } : {}),
    signals: options.signals ?? [],
  });
  return collect(result);
}
