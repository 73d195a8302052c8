import { client } from "../client.js";
import { dim, green, red, yellow } from "../format.js";

/** `rewind epochs [--json]`: the epochs the server's build supports, and the live runs on each. */
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
      : `V8 ${e.environment.v8}, isolated-vm ${e.environment.isolatedVm}`,
    `${e.runs.open} live`,
    Object.entries(e.runs.byStatus)
      .map(([status, n]) => `${n} ${status === "quarantined" ? yellow(status) : status}`)
      .join(", "),
  ]);
  const header = ["epoch", "", "runtime", "runs", ""];
  const widths = header.map((h, i) =>
    Math.max(visible(h), ...rows.map((r) => visible(r[i] ?? ""))),
  );
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c + " ".repeat(Math.max(0, widths[i]! - visible(c))))
      .join("  ")
      .trimEnd();
  process.stdout.write(`${[dim(line(header)), ...rows.map(line)].join("\n")}\n`);
  const stranded = epochs.filter((e) => !e.supported && e.runs.open > 0);
  for (const e of stranded)
    process.stdout.write(
      `${yellow("!")} ${e.runs.open} run(s) of epoch ${e.epoch} wait for workers of a build that supports it\n`,
    );
  return 0;
}

const visible = (text: string) => text.replace(/\u001b\[\d+m/g, "").length;
