import { LIMITS, LIMIT_NAMES, RewindError, type LimitName } from "@rewind/core";
import { client } from "../client.js";
import { dim } from "../format.js";

/** `rewind limits [--json]`: the namespace's limits in force, and which are its own. */
export async function showCommand(options: { json?: boolean }): Promise<number> {
  const view = await client().limits.get();
  if (options.json) {
    process.stdout.write(`${JSON.stringify(view, null, 2)}\n`);
    return 0;
  }
  const width = Math.max(...LIMIT_NAMES.map((n) => n.length));
  const lines = LIMIT_NAMES.map(
    (name) =>
      `${name.padEnd(width)}  ${String(view.limits[name]).padStart(12)}  ${view.own[name] === null ? dim(`default (${LIMITS[name].env})`) : "set for the namespace"}`,
  );
  process.stdout.write(`${dim(`namespace ${view.namespace}`)}\n${lines.join("\n")}\n`);
  return 0;
}

/** `rewind limits set name=value… ` (value `default` puts a limit back to the default). */
export async function setCommand(assignments: string[]): Promise<number> {
  const changes: Record<string, number | null> = {};
  for (const assignment of assignments) {
    const match = /^([A-Za-z]+)=(\d+|default)$/.exec(assignment);
    if (match === null || !(LIMIT_NAMES as string[]).includes(match[1]!))
      throw new RewindError(
        "INVALID_INPUT",
        `"${assignment}" is not name=value: the limits are ${LIMIT_NAMES.join(", ")}; a value is a positive integer or "default"`,
      );
    changes[match[1] as LimitName] = match[2] === "default" ? null : Number(match[2]);
  }
  await client().limits.set(changes);
  return showCommand({});
}
