import type { ForkPreview } from "@rewind/sdk";
import { client } from "../client.js";
import { dim, red, yellow } from "../format.js";
import { compileCached } from "../compile-cache.js";

/**
 * `rewind fork <run> --script fixed.ts [--at SEQ] [--dry-run]`: starts the fork and prints its id
 * on a line of its own, then what it reuses, the first thing that runs live and any call of a tool
 * marked unsafeToRepeat it would make again (the API computes this preview as the fork's worker
 * will). With --dry-run, only the preview; nothing is stored.
 */
export async function forkCommand(
  runId: string,
  options: { script: string; at?: string; dryRun?: boolean },
): Promise<number> {
  const script = await compileCached(options.script);
  const at = options.at === undefined ? undefined : Number(options.at);
  const fork = await client().runs.fork(runId, {
    script: { entry: script.entry, code: script.code, sourceMap: script.sourceMap },
    ...(at === undefined ? {} : { at }),
    ...(options.dryRun ? { dryRun: true } : {}),
  });
  if ("id" in fork) process.stdout.write(`${fork.id}\n`);
  const out = options.dryRun ? process.stdout : process.stderr;
  out.write(describe(runId, fork.preview, options.dryRun === true));
  return 0;
}

function describe(parent: string, preview: ForkPreview, dryRun: boolean): string {
  const would = dryRun ? "would " : "";
  const live = preview.firstLive;
  const lines = [
    `${dim(`${would}reuse`)} ${preview.reused} entries of ${parent}`,
    `${dim(`${would}run live from`)} ${live ? `${live.label} at seq ${live.seq}${live.callsite ? ` (${live.callsite})` : ""}` : "the end of its history"}`,
    ...preview.runAgain.map(
      (call) =>
        `${dim(`${would}run again`)} tools.${call.name}() at seq ${call.seq} (callId ${call.callId}): it was in flight in ${parent}`,
    ),
    ...preview.unsafe.map((call) => `${yellow("unsafe to repeat")} ${call.message}`),
    ...(preview.parentCancelled
      ? [
          `${yellow("note")} ${parent} was cancelled at seq ${preview.parentCancelled.seq}${preview.parentCancelled.reason ? ` (${preview.parentCancelled.reason})` : ""}: the fork does not inherit the cancel, it ${dryRun ? "would run" : "runs"} on live past it (rewind cancel <fork> stops it)`,
        ]
      : []),
    ...(preview.failure
      ? [`${red(`${would}fail`)} with ${preview.failure.code} before calling anything`]
      : []),
    ...(preview.toolsetKnown
      ? []
      : [
          dim(
            "(no worker has published this run's toolset: calls to tools marked unsafeToRepeat cannot be named)",
          ),
        ]),
  ];
  return `${lines.join("\n")}\n`;
}
