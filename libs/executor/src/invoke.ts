import {
  RewindError,
  canonicalize,
  toErrorData,
  type CallEntry,
  type ErrorData,
  type Json,
  type Tool,
} from "@rewind/core";
import type { IncomingEvent } from "@rewind/journal";
import { armUntil } from "./live/long-timer.js";

/** A call's outcome, and how many times its tool was tried for it (1, or more with retries). */
export type CallOutcome = ({ ok: true; result: Json } | { ok: false; error: ErrorData }) & {
  attempts: number;
};

/**
 * The event a call's outcome is journaled as. Its tries are kept when there was more than one
 * (an event's extra field is stored as given and never replayed: the script sees the same value).
 */
export function outcomeEvent(
  call: CallEntry,
  outcome: CallOutcome,
  at: number,
): Extract<IncomingEvent, { kind: "call.result" | "call.error" }> {
  const attempts = outcome.attempts > 1 ? { attempts: outcome.attempts } : {};
  return outcome.ok
    ? { kind: "call.result", callSeq: call.seq, result: outcome.result, at, ...attempts }
    : { kind: "call.error", callSeq: call.seq, error: outcome.error, at, ...attempts };
}

export interface InvokeOptions {
  runId: string;
  toolset: string;
  maxValueBytes: number;
  /** Waits between retries; mock mode passes one that does not wait in real time. */
  backoff: (ms: number) => Promise<void>;
}

/**
 * Runs one journaled call against its tool: the call's callId as the idempotency key, each
 * attempt bounded by the tool's timeout, retries with exponential backoff. Whatever the tool
 * returns is normalised to JSON (and size-checked) so the journal holds exactly what the script
 * will see; whatever it throws becomes error data, never a host stack.
 */
export async function invokeTool(
  tool: Tool,
  call: CallEntry,
  options: InvokeOptions,
): Promise<CallOutcome> {
  let last: ErrorData = { name: "Error", message: "not attempted" };
  let attempt = 1;
  for (; attempt <= tool.retries + 1; attempt++) {
    if (attempt > 1) await options.backoff(200 * 2 ** (attempt - 2));
    // An AbortController only when a timeout can fire: it is an allocation on the hot path.
    const controller = tool.timeoutMs === undefined ? undefined : new AbortController();
    const ctx = {
      callId: call.callId,
      runId: options.runId,
      toolset: options.toolset,
      tool: tool.name,
      attempt,
      signal: controller?.signal ?? NEVER_ABORTED,
    };
    try {
      const args = structuredClone(call.args);
      const value = await withTimeout(Promise.resolve(tool.run(args, ctx)), tool, controller);
      return { ok: true, result: normalise(value, tool, options.maxValueBytes), attempts: attempt };
    } catch (error) {
      last = toErrorData(error);
      if (error instanceof RewindError && error.code === "PAYLOAD_TOO_LARGE") break;
    }
  }
  return { ok: false, error: last, attempts: Math.min(attempt, tool.retries + 1) };
}

function normalise(value: unknown, tool: Tool, maxValueBytes: number): Json {
  let canonical: string;
  try {
    canonical = canonicalize(
      value === undefined ? null : JSON.parse(JSON.stringify(value) ?? "null"),
    );
  } catch (error) {
    throw new RewindError(
      "TOOL_ERROR",
      `Tool ${tool.name} returned a value JSON cannot represent: ${(error as Error).message}`,
    );
  }
  const bytes = Buffer.byteLength(canonical);
  if (bytes > maxValueBytes) {
    throw new RewindError(
      "PAYLOAD_TOO_LARGE",
      `Tool ${tool.name} returned ${bytes} bytes of JSON, over the limit of ${maxValueBytes} bytes: return a reference to large data instead`,
    );
  }
  return JSON.parse(canonical) as Json;
}

const NEVER_ABORTED = new AbortController().signal;

function withTimeout<T>(
  work: Promise<T>,
  tool: Tool,
  controller: AbortController | undefined,
): Promise<T> {
  if (tool.timeoutMs === undefined || controller === undefined) return work;
  const timeoutMs = tool.timeoutMs;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    // Armed in steps: a timeout past 2^31-1 ms (`timeout: "30d"`) set as one setTimeout fired
    // after 1 ms, timing every call of the tool out at once.
    armUntil(
      Date.now() + timeoutMs,
      Date.now,
      () => {
        controller.abort();
        reject(
          new RewindError(
            "TOOL_TIMEOUT",
            `Tool ${tool.name} did not answer within ${timeoutMs} ms`,
          ),
        );
      },
      (handle) => (timer = handle),
      true,
    );
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
