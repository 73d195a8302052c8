import { RewindError } from "@rewind/core";
import type { CapturePolicyView, PutCapturePolicy } from "@rewind/sdk";
import { client } from "../client.js";
import { dim } from "../format.js";

/** `rewind capture [show] [--toolset T] [--json]`: what the namespace redacts before the journal. */
export async function showCommand(options: { toolset?: string; json?: boolean }): Promise<number> {
  const view = await client().capturePolicy.get(
    options.toolset === undefined ? {} : { toolset: options.toolset },
  );
  return print(view, options.json === true);
}

/**
 * `rewind capture set [--toolset T] [--field PATH]… [--detector NAME]… [--pattern NAME=REGEX]…`:
 * replaces the policy (new entries only). With none of them, the policy is emptied.
 */
export async function setCommand(options: {
  toolset?: string;
  field?: string[];
  detector?: string[];
  pattern?: string[];
  json?: boolean;
}): Promise<number> {
  const patterns = (options.pattern ?? []).map((text) => {
    const equals = text.indexOf("=");
    if (equals < 1)
      throw new RewindError(
        "INVALID_INPUT",
        `--pattern "${text}" is not NAME=REGEX (e.g. --pattern 'ssn=\\d{3}-\\d{2}-\\d{4}')`,
      );
    return { name: text.slice(0, equals), regex: text.slice(equals + 1) };
  });
  const policy: PutCapturePolicy = {
    ...(options.toolset === undefined ? {} : { toolset: options.toolset }),
    fields: options.field ?? [],
    detectors: (options.detector ?? []) as PutCapturePolicy["detectors"],
    patterns,
  };
  return print(await client().capturePolicy.set(policy), options.json === true);
}

function print(view: CapturePolicyView, json: boolean): number {
  if (json) {
    process.stdout.write(`${JSON.stringify(view, null, 2)}\n`);
    return 0;
  }
  const list = (items: string[]) => (items.length === 0 ? dim("none") : items.join(", "));
  process.stdout.write(
    `${dim(`namespace ${view.namespace}, ${view.toolset === null ? "every toolset" : `toolset ${view.toolset}`}`)}\n` +
      `fields     ${list(view.fields)}\n` +
      `detectors  ${list(view.detectors)}\n` +
      `patterns   ${list(view.patterns.map((p) => `${p.name}=/${p.regex}/${p.flags ?? ""}`))}\n`,
  );
  return 0;
}
