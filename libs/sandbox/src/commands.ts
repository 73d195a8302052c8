import type { ErrorData, GuestCommand, GuestEvent, Json } from "@rewind/core";

export function eventToWire(event: GuestEvent): string {
  switch (event.type) {
    case "call.result":
      return `{"t":"result","id":${event.id},"at":${event.at},"ok":true,"value":${JSON.stringify(event.result)}}`;
    case "call.error":
      return `{"t":"result","id":${event.id},"at":${event.at},"ok":false,"error":${JSON.stringify({
        name: event.error.name,
        message: event.error.message,
        code: event.error.code,
      })}}`;
    case "timer.fired":
      return `{"t":"fire","id":${event.id},"at":${event.at}}`;
    case "signal":
      return `{"t":"signal","name":${JSON.stringify(event.name)},"at":${event.at},"payload":${JSON.stringify(event.payload)}}`;
  }
}

/** What the host holds a batch to, beside its shape. */
export interface WireLimits {
  /** The largest value (a call's arguments, a run's result) the guest may send, in UTF-8 bytes. */
  maxValueBytes: number;
}

/**
 * The deepest nesting of arrays and objects a value from the guest may have. 5,000 overflows the
 * host's recursive walks of a value (canonical JSON); the guest's own JSON.stringify gives up
 * about there too, so only a forged batch holds a deeper one.
 */
const MAX_VALUE_DEPTH = 4000;

/** The last instant a timer can be due (+275760-09-13): the guest refuses any later wait. */
const LAST_DUE_MS = 8.64e15;

/** `line:column` in the generated code, or "" when the command carries no callsite. */
const CALLSITE = /^(?:[0-9]{1,10}:[0-9]{1,10})?$/;

/** The fields of each command, exactly: a forged batch is recognised by any other. */
const FIELDS: Record<string, readonly string[]> = {
  call: ["t", "id", "name", "site", "args"],
  timer: ["t", "id", "due", "site"],
  cancel: ["t", "id", "site"],
  out: ["t", "stream", "site", "text"],
  doneOk: ["t", "ok", "value"],
  doneFailed: ["t", "ok", "error"],
  error: ["name", "message", "stack", "code"],
};

/**
 * Parses a batch the guest emitted. The guest is untrusted, and so is every string it builds from
 * what the script controls: the batch is held to the wire's schema (each command's fields and
 * types exactly, callsites as `line:column`, values within the size and depth limits, nothing
 * after the run's end), and anything else is rejected, for the caller to fail the run with
 * SANDBOX_ERROR.
 */
export function parseCommands(
  batchJson: string,
  mapCallsite: (generated: string) => string,
  mapStack: (stack: string) => string,
  limits: WireLimits,
): GuestCommand[] {
  const raw: unknown = JSON.parse(batchJson);
  if (!Array.isArray(raw)) throw new TypeError("the command batch is not an array");
  // Every value is a piece of the batch: a short batch holds no value too large or too deep.
  const checkSize = batchJson.length * 3 > limits.maxValueBytes;
  const checkDepth = batchJson.length > 2 * MAX_VALUE_DEPTH;
  const value = (v: unknown, what: string): Json => {
    if (v === undefined) throw new TypeError(`${what} is missing`);
    if (checkDepth && depthExceeds(v, MAX_VALUE_DEPTH))
      throw new TypeError(`${what} is nested more than ${MAX_VALUE_DEPTH} deep`);
    if (checkSize) {
      const bytes = Buffer.byteLength(JSON.stringify(v));
      if (bytes > limits.maxValueBytes)
        throw new TypeError(`${what} is ${bytes} bytes, over the limit of ${limits.maxValueBytes}`);
    }
    return v as Json;
  };
  const commands: GuestCommand[] = [];
  for (const item of raw) {
    if (commands.length > 0) {
      const last = commands[commands.length - 1]!;
      if (last.type === "complete" || last.type === "fail")
        throw new TypeError("a command follows the run's end in the batch");
    }
    const c = record(item, "a command");
    const site = () => {
      const generated = str(c.site, "site");
      if (!CALLSITE.test(generated)) throw new TypeError("a callsite is not line:column");
      return mapCallsite(generated);
    };
    switch (c.t) {
      case "call":
        fields(c, FIELDS.call!);
        commands.push({
          type: "call",
          id: int(c.id),
          name: str(c.name, "a tool's name"),
          args: value(c.args, "a call's arguments"),
          callsite: site(),
        });
        break;
      case "timer": {
        fields(c, FIELDS.timer!);
        const due = num(c.due);
        if (due < 0 || due > LAST_DUE_MS) throw new TypeError("a timer's due time is out of range");
        commands.push({ type: "timer.set", id: int(c.id), due, callsite: site() });
        break;
      }
      case "cancel":
        fields(c, FIELDS.cancel!);
        commands.push({ type: "timer.cancel", id: int(c.id), callsite: site() });
        break;
      case "out": {
        fields(c, FIELDS.out!);
        if (c.stream !== "stdout" && c.stream !== "stderr")
          throw new TypeError("bad output stream");
        commands.push({
          type: "output",
          stream: c.stream,
          text: str(c.text, "text"),
          callsite: site(),
        });
        break;
      }
      case "done": {
        if (c.ok === true) {
          fields(c, FIELDS.doneOk!);
          commands.push({ type: "complete", result: value(c.value, "the run's result") });
          break;
        }
        if (c.ok !== false) throw new TypeError("a completion's ok is not a boolean");
        fields(c, FIELDS.doneFailed!);
        const e = record(c.error, "a failure's error");
        fields(e, FIELDS.error!);
        const error: ErrorData = {
          name: str(e.name, "an error's name"),
          message: str(e.message, "an error's message"),
          // A too-large result is the one failure the guest names itself; any other code a
          // script sets on its own error cannot pose as a platform verdict.
          code: e.code === "PAYLOAD_TOO_LARGE" ? "PAYLOAD_TOO_LARGE" : "SCRIPT_ERROR",
        };
        if (e.code !== undefined) str(e.code, "an error's code");
        if (e.stack !== undefined) error.stack = mapStack(str(e.stack, "an error's stack"));
        commands.push({ type: "fail", error });
        break;
      }
      default:
        throw new TypeError(`unknown command type ${JSON.stringify(c.t) ?? "undefined"}`);
    }
  }
  return commands;
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new TypeError(`${what} is not an object`);
  return value as Record<string, unknown>;
}
/** Only known fields: a field the runtime never writes means the batch was written by another. */
function fields(c: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(c))
    if (!known.includes(key)) throw new TypeError(`a command has an unknown field ${key}`);
}
function int(value: unknown): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0)
    throw new TypeError("bad id");
  return value;
}
function num(value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value)) throw new TypeError("bad number");
  return value;
}
function str(value: unknown, what: string): string {
  if (typeof value !== "string") throw new TypeError(`${what} is not a string`);
  return value;
}
/** Iterative: a value nested deep enough to matter would overflow a recursive walk. */
function depthExceeds(root: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[root, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== "object") continue;
    if (depth >= max) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}
