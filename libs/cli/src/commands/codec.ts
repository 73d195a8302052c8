import { RewindError } from "@rewind/core";
import { client } from "../client.js";
import { dim } from "../format.js";

/** `rewind codec [show] [--json]`: whether the namespace's values are sealed at rest. */
export async function showCommand(options: { json?: boolean }): Promise<number> {
  const view = await client().codec.get();
  if (options.json) {
    process.stdout.write(`${JSON.stringify(view, null, 2)}\n`);
    return 0;
  }
  const keys =
    view.keyIds.length === 0
      ? "none (REWIND_CODEC_KEYS is not set on the API)"
      : `${view.keyIds.join(", ")}; new values sealed with ${view.encryptingKeyId}`;
  process.stdout.write(
    `${dim(`namespace ${view.namespace}`)}\n` +
      `payload codec  ${view.enabled ? `on (${view.algorithm})` : "off"}\n` +
      `keys           ${keys}\n`,
  );
  return 0;
}

/** `rewind codec set on|off`. */
export async function setCommand(state: string): Promise<number> {
  if (state !== "on" && state !== "off")
    throw new RewindError(
      "INVALID_INPUT",
      `"${state}" is not a codec state: say \`rewind codec set on\` or \`rewind codec set off\``,
    );
  await client().codec.set({ enabled: state === "on" });
  return showCommand({});
}
