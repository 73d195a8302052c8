import { RewindError } from "@rewind/core";
import type { EntryLabel, QuarantineActionResult, QuarantineSummary } from "@rewind/sdk";
import { client } from "../client.js";
import { dim, green, red, statusColor, yellow } from "../format.js";

/** `rewind quarantine list [--json]`: the namespace's quarantined runs and why each is held. */
export async function listCommand(options: { json?: boolean; limit?: string }): Promise<number> {
  const { runs } = await client().quarantine.list({ limit: positive(options.limit, "--limit") });
  if (options.json) {
    process.stdout.write(`${JSON.stringify(runs, null, 2)}\n`);
    return 0;
  }
  if (runs.length === 0) {
    process.stdout.write(dim("no quarantined runs\n"));
    return 0;
  }
  for (const run of runs) process.stdout.write(`${summaryLines(run).join("\n")}\n\n`);
  return 0;
}

/** `rewind quarantine show <run> [--json]`: the whole report while quarantined, and the history. */
export async function showCommand(runId: string, options: { json?: boolean }): Promise<number> {
  const detail = await client().quarantine.get(runId);
  if (options.json) {
    process.stdout.write(`${JSON.stringify(detail, null, 2)}\n`);
    return 0;
  }
  const lines = [`run      ${detail.run.id}`, `status   ${statusColor(detail.run.status)}`];
  lines.push(`epoch    ${detail.run.epoch}`);
  if (detail.current !== undefined) {
    lines.push("", ...summaryLines(detail.current).slice(1));
    lines.push("", dim("report"), ...JSON.stringify(detail.report, null, 2).split("\n"));
  } else lines.push(dim("not quarantined"));
  if (detail.history.length > 0) {
    lines.push("", dim("history"));
    for (const event of detail.history)
      lines.push(
        `  seq ${String(event.seq).padEnd(5)} ${event.kind.padEnd(16)} ${event.at}` +
          `${event.by === undefined ? "" : `  by ${event.by}`}` +
          `${event.epoch === undefined ? "" : `  onto epoch ${event.epoch}`}`,
      );
  }
  process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

/** `rewind quarantine release <run> [--epoch N]`: replay it after a fix, on its own epoch or N's. */
export async function releaseCommand(runId: string, options: { epoch?: string }): Promise<number> {
  const epoch = positive(options.epoch, "--epoch");
  const result = await client().quarantine.release(runId, epoch === undefined ? {} : { epoch });
  return report(result);
}

/** `rewind quarantine give-up <run> [--reason R]`: fail it, with the reason, for good. */
export async function giveUpCommand(runId: string, options: { reason?: string }): Promise<number> {
  const result = await client().quarantine.giveUp(
    runId,
    options.reason === undefined ? {} : { reason: options.reason },
  );
  return report(result);
}

function report(result: QuarantineActionResult): number {
  const verb = result.action === "release" ? "released" : "given up";
  switch (result.state) {
    case "done":
      process.stdout.write(`${green(`✓ ${verb}`)}: ${result.message}\n`);
      return 0;
    case "unchanged":
      process.stdout.write(`${dim(`already ${verb}`)}: ${result.message}\n`);
      return 0;
    case "pending":
      process.stdout.write(`${yellow("requested")}: ${result.message}\n`);
      return 0;
  }
}

function summaryLines(run: QuarantineSummary): string[] {
  const lines = [
    `${run.id}  ${red("quarantined")}  ${run.reason}  epoch ${run.epoch}  ${dim(run.quarantinedAt)}`,
  ];
  if (run.divergence !== undefined) {
    lines.push(
      `  diverges at seq ${run.divergence.seq} (${run.divergence.matched} matched before)`,
    );
    lines.push(`  recorded  ${label(run.divergence.recorded)}`);
    lines.push(
      `  replayed  ${run.divergence.replayed ? label(run.divergence.replayed) : "nothing more"}`,
    );
  } else lines.push(`  ${run.message.split("\n")[0] ?? ""}`);
  const worker = run.worker;
  if (worker !== undefined || run.runEpoch !== undefined)
    lines.push(
      dim(
        `  run epoch ${run.runEpoch ?? run.epoch}; found by ${worker?.owner ?? "a worker"}` +
          ` (${worker?.build ?? "unknown build"}, epochs ${(run.workerEpochs ?? []).join(", ")})`,
      ),
    );
  for (const request of run.pending)
    lines.push(
      yellow(
        `  pending ${request.action} by ${request.by}` +
          `${request.epoch === undefined ? "" : ` onto epoch ${request.epoch}`}`,
      ),
    );
  return lines;
}

function label(side: EntryLabel): string {
  return `${side.label}${side.callsite ? dim(`   at ${side.callsite}`) : ""}`;
}

function positive(text: string | undefined, what: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1)
    throw new RewindError(
      "INVALID_INPUT",
      `${what} must be a whole number, 1 or more: got ${text}`,
    );
  return n;
}
