import { RewindError } from "@rewind/core";
import type { WebhookEndpointView } from "@rewind/sdk";
import { client } from "../client.js";
import { dim, green, red, yellow } from "../format.js";

/*
 * `rewind webhooks add|list|remove|rotate|enable|disable|deliveries|redeliver` (docs/webhooks.md):
 * the namespace's webhook endpoints, through the API (REWIND_URL, REWIND_TOKEN).
 */

const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

function line(e: WebhookEndpointView): string {
  const state = e.enabled
    ? e.failingSince === null
      ? green("enabled")
      : yellow(`failing since ${e.failingSince}`)
    : red(`disabled (${e.disabledReason ?? "no reason"})`);
  const events = e.events.length === 0 ? "every event" : e.events.join(",");
  return `${e.id}  ${e.url}  ${dim(events)}  ${state}${e.description ? `  ${dim(e.description)}` : ""}`;
}

/** `rewind webhooks add <url> [--events a,b] [--description D] [--disabled] [--json]` */
export async function addCommand(
  url: string,
  options: { events?: string; description?: string; disabled?: boolean; json?: boolean },
): Promise<number> {
  const events = options.events
    ?.split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "");
  const made = await client().webhooks.create({
    url,
    ...(events !== undefined ? { events: events as never } : {}),
    ...(options.description !== undefined ? { description: options.description } : {}),
    ...(options.disabled === true ? { enabled: false } : {}),
  });
  if (options.json) return (print(made), 0);
  process.stdout.write(`${line(made)}\n`);
  process.stdout.write(`secret ${made.secret}\n`);
  process.stderr.write(dim("verify each request with this secret (docs/webhooks.md)\n"));
  return 0;
}

/** `rewind webhooks list [--json]` */
export async function listCommand(options: { json?: boolean }): Promise<number> {
  const { endpoints } = await client().webhooks.list();
  if (options.json) return (print({ endpoints }), 0);
  if (endpoints.length === 0) {
    process.stdout.write("no webhook endpoint: add one with `rewind webhooks add <url>`\n");
    return 0;
  }
  for (const e of endpoints) process.stdout.write(`${line(e)}\n`);
  return 0;
}

/** `rewind webhooks remove <id>` */
export async function removeCommand(id: string): Promise<number> {
  const gone = await client().webhooks.remove(id);
  process.stdout.write(`removed ${gone.id} (${gone.url})\n`);
  return 0;
}

/** `rewind webhooks rotate <id> [--keep-previous 24h] [--json]` */
export async function rotateCommand(
  id: string,
  options: { keepPrevious?: string; json?: boolean },
): Promise<number> {
  const rotated = await client().webhooks.rotate(
    id,
    options.keepPrevious !== undefined ? { keepPrevious: options.keepPrevious } : {},
  );
  if (options.json) return (print(rotated), 0);
  process.stdout.write(`secret ${rotated.secret}\n`);
  process.stderr.write(
    dim(
      rotated.previousSecretUntil === null
        ? "the previous secret no longer signs\n"
        : `the previous secret signs too until ${rotated.previousSecretUntil}\n`,
    ),
  );
  return 0;
}

/** `rewind webhooks enable|disable <id>` */
export async function enableCommand(id: string): Promise<number> {
  process.stdout.write(`${line(await client().webhooks.enable(id))}\n`);
  return 0;
}
export async function disableCommand(id: string): Promise<number> {
  process.stdout.write(`${line(await client().webhooks.disable(id))}\n`);
  return 0;
}

/** `rewind webhooks deliveries <id> [--status S] [--limit N] [--delivery D] [--json]` */
export async function deliveriesCommand(
  id: string,
  options: { status?: string; limit?: string; before?: string; delivery?: string; json?: boolean },
): Promise<number> {
  if (options.delivery !== undefined) {
    const detail = await client().webhooks.delivery(id, options.delivery);
    if (options.json) return (print(detail), 0);
    process.stdout.write(
      `${detail.id}  ${detail.eventId}  ${detail.type}  ${detail.runId}  ${detail.status}\n${dim(detail.payload)}\n`,
    );
    for (const a of detail.log)
      process.stdout.write(
        `  #${a.attempt}  ${a.at}  ${a.status ?? "-"}  ${a.durationMs} ms  ${a.error ?? ""}\n`,
      );
    return 0;
  }
  const statuses = ["pending", "delivered", "failed"];
  if (options.status !== undefined && !statuses.includes(options.status))
    throw new RewindError(
      "INVALID_INPUT",
      `--status must be one of ${statuses.join(", ")}, not ${JSON.stringify(options.status)}`,
    );
  const page = await client().webhooks.deliveries(id, {
    ...(options.limit !== undefined ? { limit: Number(options.limit) } : {}),
    ...(options.before !== undefined ? { before: options.before } : {}),
    ...(options.status !== undefined ? { status: options.status as "pending" } : {}),
  });
  if (options.json) return (print(page), 0);
  if (page.deliveries.length === 0) process.stdout.write("no delivery yet\n");
  for (const d of page.deliveries) {
    const state =
      d.status === "delivered"
        ? green("delivered")
        : d.status === "failed"
          ? red("failed")
          : yellow(`pending, next ${d.nextAttemptAt ?? "now"}`);
    process.stdout.write(
      `${d.id.padStart(6)}  ${d.eventId}  ${d.type.padEnd(15)}  ${d.runId}  ${state}  ${dim(`${d.attempts} attempt(s)${d.lastStatus !== null ? `, last ${d.lastStatus}` : ""}${d.lastError ? `: ${d.lastError}` : ""}`)}\n`,
    );
  }
  if (page.next !== undefined)
    process.stdout.write(dim(`more: rewind webhooks deliveries ${id} --before ${page.next}\n`));
  return 0;
}

/** `rewind webhooks redeliver <id> <delivery>` */
export async function redeliverCommand(id: string, delivery: string): Promise<number> {
  const d = await client().webhooks.redeliver(id, delivery);
  process.stdout.write(`delivery ${d.id} (${d.eventId}) will be sent again\n`);
  return 0;
}
