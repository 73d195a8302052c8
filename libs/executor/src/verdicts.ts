import type { CallEntry, ErrorData, Toolset } from "@rewind/core";

/** The platform's verdicts on a call, with messages that say what to do. */

export function toolNotFound(
  name: string,
  toolsetName: string,
  toolset: Toolset | undefined,
): ErrorData {
  const known = toolset === undefined ? [] : [...toolset.tools.keys()];
  const hint =
    toolset === undefined
      ? `no toolset "${toolsetName}" is loaded here: start the worker with --toolset for it`
      : name === "fetch"
        ? "fetch is a journaled tool call: add a `fetch` tool to the toolset to let scripts use it"
        : known.length > 0
          ? `it has ${known.map((k) => `"${k}"`).join(", ")}`
          : "it has no tools";
  return {
    name: "RewindError",
    code: "TOOL_NOT_FOUND",
    message: `The script called tools.${name}(), but toolset "${toolsetName}" has no tool "${name}": ${hint}`,
  };
}

export function unsafeToRepeat(call: CallEntry, toolsetName: string): ErrorData {
  return {
    name: "RewindError",
    code: "UNSAFE_TO_REPEAT",
    message:
      `The call tools.${call.name}() at seq ${call.seq} (callId ${call.callId}) was in flight when the run ` +
      `stopped, and ${toolsetName}.${call.name} is marked unsafeToRepeat, so it is not called again: ` +
      `check whether it took effect, then fork the run`,
  };
}

/**
 * A run that took its process down again and again without journaling progress. `cause` is what
 * the process said as it died, when a supervisor saw it (a sandbox process); without it, the
 * likely cause is named.
 */
export function crashLoop(attempts: number, lastSeq: number, cause?: string): ErrorData {
  const why =
    cause === undefined
      ? "most likely the script exhausted the sandbox's memory, which aborts the process"
      : cause;
  return {
    name: "RewindError",
    code: "CRASH_LOOP",
    message:
      `The run was started ${attempts} times in a row without journaling any progress: each time the ` +
      `process running it stopped (${why}). It is failed instead of retried: look at what the ` +
      `script does after seq ${lastSeq}, fix it, and fork the run`,
  };
}

/**
 * What the store said when it refused a commit for what was in it (SQLSTATE class 22, data
 * exception, or 54, program limit exceeded), or undefined for any other failure. Such a refusal
 * comes back on every retry; an outage or a lost lease does not look like it.
 */
export function storeRefusal(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !/^(22|54)[0-9A-Z]{3}$/.test(code)) return undefined;
  return `${(error as Error).message} (SQLSTATE ${code})`;
}

/** A run whose commits the store refused again and again (see storeRefusal). */
export function storeRefused(times: number, lastSeq: number, cause: string): ErrorData {
  return {
    name: "RewindError",
    code: "SANDBOX_ERROR",
    message:
      `The store refused to journal what the run did after seq ${lastSeq}, ${times} times in a ` +
      `row: ${cause}. This is a fault of the platform, not of the script: the run is failed ` +
      `instead of retried forever; report this message, and fork the run once it is fixed`,
  };
}
