import { client } from "../client.js";
import { dim, green, red, yellow } from "../format.js";

/**
 * `rewind epochs [--json]`: the epochs the server's build supports, the live runs on each, and the
 * live workers that run it.
 */
export async function epochsCommand(options: { json?: boolean }): Promise<number> {
  const { current, epochs } = await client().epochs();
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ current, epochs }, null, 2)}\n`);
    return 0;
  }
  const rows = epochs.map((e) => [
    String(e.epoch),
    e.current ? green("current") : e.supported ? "supported" : red("unsupported"),
    e.environment === undefined
      ? dim("unknown to this build")
      : `V8 ${e.environment.v8}, isolated-vm ${e.environment.isolatedVm}${e.released === undefined ? dim(" (draft)") : ""}`,
    `${e.runs.open} live`,
    e.workers > 0 ? `${e.workers} worker${e.workers === 1 ? "" : "s"}` : yellow("no worker"),
    Object.entries(e.runs.byStatus)
      .map(([status, n]) => `${n} ${status === "quarantined" ? yellow(status) : status}`)
      .join(", "),
  ]);
  const header = ["epoch", "", "runtime", "runs", "workers", ""];
  const widths = header.map((h, i) =>
    Math.max(visible(h), ...rows.map((r) => visible(r[i] ?? ""))),
  );
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c + " ".repeat(Math.max(0, widths[i]! - visible(c))))
      .join("  ")
      .trimEnd();
  process.stdout.write(`${[dim(line(header)), ...rows.map(line)].join("\n")}\n`);
  for (const e of epochs)
    if ((e.liveWorkers ?? []).length > 0)
      process.stdout.write(
        `${dim(`epoch ${e.epoch} runs on`)} ${e.liveWorkers.map((w) => w.owner).join(", ")}\n`,
      );
  for (const e of epochs)
    if (e.waiting > 0)
      process.stdout.write(
        `${yellow("!")} ${e.waiting} run(s) of epoch ${e.epoch} wait: no live worker runs it (start one whose build supports it)\n`,
      );
  return 0;
}

const visible = (text: string) => text.replace(/\u001b\[\d+m/g, "").length;
