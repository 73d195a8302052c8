import { existsSync, readFileSync } from "node:fs";
import { RewindError, type JournalEntry } from "@rewind/core";
import { checkReplay, failureVerdict } from "@rewind/executor";
import { parseJournalFile } from "@rewind/journal";
import { Sandbox, assertReplayableHere, type CompiledScript } from "@rewind/sandbox";
import type { RunStatus } from "@rewind/sdk";
import { client } from "../client.js";
import { green, red } from "../format.js";
import { compileCached } from "../compile-cache.js";

/**
 * `rewind replay <run|journal-file> [--script FILE]`: re-executes the script locally against the
 * journal, calling nothing. Exit 0 when it matches, 1 with the first divergence. Against a run
 * that failed, a corrected script diverging only where the run failed is safe to fork (exit 0).
 */
export async function replayCommand(
  target: string | undefined,
  options: { script?: string; all?: boolean; status?: string },
): Promise<number> {
  if (options.all) return replayAll(options);
  if (target === undefined) {
    throw new RewindError(
      "INVALID_INPUT",
      "Name a run or a journal file to replay, or pass --all with --script",
    );
  }
  let journal: readonly JournalEntry[];
  let script: CompiledScript;
  if (existsSync(target)) {
    journal = parseJournalFile(readFileSync(target, "utf8"), target);
    if (options.script === undefined) {
      throw new RewindError(
        "INVALID_INPUT",
        `A journal file holds no script: pass the script to check with --script FILE`,
      );
    }
    script = await compileCached(options.script);
  } else {
    const api = client();
    journal = (await api.runs.journal(target)).entries;
    script =
      options.script === undefined
        ? await api.runs.script(target)
        : await compileCached(options.script);
  }
  // Replayed here, on the CLI's own Node: another epoch's runtime would diverge by itself.
  assertReplayableHere(journal, "rewind replay");
  const sandbox = new Sandbox();
  try {
    const check = await checkReplay(sandbox, script, journal);
    if (check.matches) {
      process.stdout.write(
        `${green("✓")} ${script.entry} replays ${target}: all ${check.entries} journal entries match\n`,
      );
      return 0;
    }
    const verdict = failureVerdict(check, journal);
    if (verdict === "fixes-failure" && options.script !== undefined) {
      const failedAt = check.divergence.seq;
      process.stdout.write(
        // run.started is the fork's own: it reuses the entries after it, up to the failure.
        `${green("✓")} ${script.entry} is safe to fork from ${target}: a fork reuses the ${failedAt - 2} entries before its failure (seq ${failedAt}), and where it failed the script now ${check.divergence.replayed ? `emits ${check.divergence.replayed.label}` : "waits"}\n` +
          `  fork it: rewind fork ${target} --script ${options.script}\n`,
      );
      return 0;
    }
    if (verdict === "incompatible") {
      process.stderr.write(
        `${red("✗")} ${script.entry} is incompatible with ${target}: it diverges at seq ${check.divergence.seq}, before the run's failure, so a fork would not reuse the calls from there on\n`,
      );
    }
    process.stderr.write(`${red("✗")} ${check.message}\n`);
    return 1;
  } finally {
    sandbox.dispose();
  }
}

const OPEN: readonly RunStatus[] = ["queued", "running", "waiting", "quarantined"];
/** Runs per request of `--all` (the API takes at most 200). */
const BATCH = 100;

/**
 * `rewind replay --script fixed.ts --all [--status S]`: the corrected script checked against the
 * history of every open run (or those with one status), on the server, several at a time. A table
 * says which are compatible (a failed run whose failure it fixes is: a fork reuses all of it);
 * the exit code is 0 only if all are: a gate before a deploy.
 */
async function replayAll(options: { script?: string; status?: string }): Promise<number> {
  if (options.script === undefined)
    throw new RewindError(
      "INVALID_INPUT",
      "--all checks a corrected script: pass it with --script FILE",
    );
  const compiled = await compileCached(options.script);
  const script = { entry: compiled.entry, code: compiled.code, sourceMap: compiled.sourceMap };
  const api = client();
  const statuses = options.status === undefined ? OPEN : [options.status as RunStatus];
  const ids: string[] = [];
  for (const status of statuses) {
    let before: string | undefined;
    for (;;) {
      const page = await api.runs.list({ status, limit: 500, ...(before ? { before } : {}) });
      ids.push(...page.runs.map((r) => r.id));
      if (page.next === undefined || page.runs.length === 0) break;
      before = page.next;
    }
  }
  // Batches of runs, one request each, two in flight: the server spreads each batch over its
  // replay threads while it reads the next journals (a request per run cost more than the
  // replay itself: measured, 1,000 requests kept the API's main thread busier than both threads).
  const rows: string[][] = [];
  let incompatible = 0;
  let next = 0;
  const record = (checks: Awaited<ReturnType<typeof api.runs.replayMany>>["checks"]) => {
    for (const check of checks) {
      if (check.matches) rows.push([check.runId, green("compatible"), "", ""]);
      else if (check.verdict === "fixes-failure") {
        // A failed run the corrected script now gets past: a fork of it reuses everything.
        const d = check.divergence as { seq?: number } | undefined;
        rows.push([check.runId, green(`fixes the failure at seq ${d?.seq ?? "?"}`), "", ""]);
      } else if (check.error !== undefined) {
        incompatible++;
        rows.push([check.runId, red(check.error.code), check.error.message, ""]);
      } else {
        incompatible++;
        const d = check.divergence as
          | {
              seq?: number;
              replayed?: { label?: string; callsite?: string };
              recorded?: { callsite?: string };
            }
          | undefined;
        rows.push([
          check.runId,
          red(`diverges at seq ${d?.seq ?? "?"}`),
          d?.replayed?.label ?? "nothing",
          d?.replayed?.callsite ?? d?.recorded?.callsite ?? "",
        ]);
      }
    }
  };
  const lane = async () => {
    while (next < ids.length) {
      const batch = ids.slice(next, next + BATCH);
      next += batch.length;
      record((await api.runs.replayMany(batch, script)).checks);
    }
  };
  await Promise.all([lane(), lane()]);
  rows.sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
  for (const row of rows) process.stdout.write(`${row.join("  ").trimEnd()}\n`);
  process.stderr.write(
    `${incompatible === 0 ? green("✓") : red("✗")} ${ids.length - incompatible} of ${ids.length} runs compatible with ${compiled.entry}\n`,
  );
  return incompatible === 0 ? 0 : 1;
}
