import { shortForm, type CallEntry } from "@rewind/core";
import { compileScript } from "@rewind/sandbox/compiler";
import { client } from "../client.js";
import { dim } from "../format.js";

/**
 * `rewind fork <run> --script fixed.ts [--at SEQ]`: starts the fork, prints its id on a line of its
 * own, then how many calls were reused and the first call that runs live.
 */
export async function forkCommand(
  runId: string,
  options: { script: string; at?: string },
): Promise<number> {
  const script = await compileScript({ file: options.script });
  const api = client();
  const at = options.at === undefined ? undefined : Number(options.at);
  const fork = await api.runs.fork(runId, {
    script: { entry: script.entry, code: script.code, sourceMap: script.sourceMap },
    ...(at === undefined ? {} : { at }),
  });
  process.stdout.write(`${fork.id}\n`);
  // The worker builds the fork's journal on its first activation: wait for it, then report.
  let entries = (await api.runs.journal(fork.id, 0)).entries;
  for (let i = 0; i < 10 && entries.length <= 1; i++)
    entries = (await api.runs.journal(fork.id, 0, "3s")).entries;
  const calls = entries.filter((e): e is CallEntry => e.kind === "call");
  const reused = calls.filter((c) => c.callId.startsWith(`${runId}/`));
  const firstLive = calls.find((c) => !c.callId.startsWith(`${runId}/`));
  process.stderr.write(
    `${dim("reused")} ${reused.length} call${reused.length === 1 ? "" : "s"} of ${runId}\n` +
      `${dim("live from")} ${firstLive ? `tools.${firstLive.name}(${shortForm(firstLive.args)}) at seq ${firstLive.seq}${firstLive.callsite ? ` (${firstLive.callsite})` : ""}` : "no live call yet"}\n`,
  );
  return 0;
}
