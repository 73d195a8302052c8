import { RewindError, parseDuration } from "@rewind/core";
import type { EpochCheckView, EpochRunVerdict } from "@rewind/sdk";
import { client } from "../client.js";
import { dim, green, red, yellow } from "../format.js";

/**
 * `rewind epochs migrate <from> --to <to> [--dry-run]`: asks a worker of epoch `to` to replay
 * the open runs of `from` on its runtime, waits for the verdicts and prints one line a run. Exit
 * 0 when every open run moved (or, with --dry-run, would), 1 when some stay on `from`.
 */
export async function migrateEpochCommand(
  from: string,
  options: { to: string; dryRun?: boolean; allowDraft?: boolean; wait: string; json?: boolean },
): Promise<number> {
  const epoch = (text: string, what: string) => {
    if (!/^\d+$/.test(text))
      throw new RewindError("INVALID_INPUT", `${what} is an epoch number, like 3; got "${text}"`);
    return Number(text);
  };
  let waitMs: number;
  try {
    waitMs = parseDuration(options.wait, "--wait");
  } catch (error) {
    throw new RewindError("INVALID_INPUT", (error as Error).message);
  }
  const api = client();
  let check = await api.migrateEpoch(epoch(from, "<from>"), {
    to: epoch(options.to, "--to"),
    dryRun: options.dryRun === true,
    allowDraft: options.allowDraft === true,
  });
  const deadline = Date.now() + waitMs;
  while (check.state !== "done" && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    check = await api.epochCheck(check.id);
  }
  if (options.json) process.stdout.write(`${JSON.stringify(check, null, 2)}\n`);
  if (check.state !== "done") {
    if (!options.json)
      process.stdout.write(
        `${yellow("!")} check ${check.id} is still ${check.state} after ${options.wait}` +
          `${check.state === "pending" ? `: no worker of epoch ${check.to} has taken it yet` : ""}. ` +
          `See it with GET /v1/epochs/checks/${check.id}\n`,
      );
    return 1;
  }
  const runs = check.runs ?? [];
  if (!options.json) process.stdout.write(describe(check, runs));
  return runs.every((r) => r.verdict === "moved" || r.verdict === "would-move") ? 0 : 1;
}

function describe(check: EpochCheckView, runs: readonly EpochRunVerdict[]): string {
  const lines = [
    dim(
      `check ${check.id}: epoch ${check.from} -> ${check.to}${check.dryRun ? " (dry run)" : ""}, ` +
        `replayed by ${check.checkedBy ?? "?"} on ${check.runtime ?? "?"}`,
    ),
  ];
  for (const run of runs)
    switch (run.verdict) {
      case "moved":
        lines.push(`${green("moved")}       ${run.runId}  (replayed to seq ${run.checkedSeq})`);
        break;
      case "would-move":
        lines.push(`${green("would move")}  ${run.runId}  (replays to seq ${run.checkedSeq})`);
        break;
      case "diverges":
        lines.push(
          `${red("stays")}       ${run.runId}  diverges at seq ${run.divergedAt ?? "?"}: ` +
            (run.message ?? "").split("\n").join("\n              "),
        );
        break;
      case "skipped":
        lines.push(`${yellow("stays")}       ${run.runId}  ${run.message ?? ""}`);
        break;
    }
  const moved = runs.filter((r) => r.verdict === "moved" || r.verdict === "would-move").length;
  lines.push(
    runs.length === 0
      ? `no open run of epoch ${check.from} in this namespace`
      : `${moved} of ${runs.length} run(s) ${check.dryRun ? "would move" : "moved"} to epoch ${check.to}` +
          (moved < runs.length
            ? `; the others stay for epoch ${check.from}'s workers (keep one running until they end)`
            : "") +
          (check.dryRun && moved > 0 ? `; run it again without --dry-run to move them` : ""),
  );
  return `${lines.join("\n")}\n`;
}
