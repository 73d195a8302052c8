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

/**
 * Parses a batch the guest emitted. The guest is untrusted: anything that is not exactly a
 * command it may emit is rejected, and the caller fails the run with SANDBOX_ERROR.
 */
export function parseCommands(
  batchJson: string,
  mapCallsite: (generated: string) => string,
  mapStack: (stack: string) => string,
): GuestCommand[] {
  const raw: unknown = JSON.parse(batchJson);
  if (!Array.isArray(raw)) throw new TypeError("the command batch is not an array");
  return raw.map((item: unknown): GuestCommand => {
    if (item === null || typeof item !== "object")
      throw new TypeError("a command is not an object");
    const c = item as Record<string, unknown>;
    const site = () => mapCallsite(str(c.site, "site"));
    switch (c.t) {
      case "call":
        return {
          type: "call",
          id: int(c.id),
          name: str(c.name, "name"),
          args: (c.args ?? null) as Json,
          callsite: site(),
        };
      case "timer":
        return { type: "timer.set", id: int(c.id), due: num(c.due), callsite: site() };
      case "cancel":
        return { type: "timer.cancel", id: int(c.id), callsite: site() };
      case "out": {
        if (c.stream !== "stdout" && c.stream !== "stderr")
          throw new TypeError("bad output stream");
        return { type: "output", stream: c.stream, text: str(c.text, "text"), callsite: site() };
      }
      case "done": {
        if (c.ok === true) return { type: "complete", result: (c.value ?? null) as Json };
        const e = (c.error ?? {}) as Record<string, unknown>;
        const error: ErrorData = {
          name: typeof e.name === "string" ? e.name : "Error",
          message: typeof e.message === "string" ? e.message : String(e.message),
          // A too-large result is the one failure the guest names itself; any other code a
          // script sets on its own error cannot pose as a platform verdict.
          code: e.code === "PAYLOAD_TOO_LARGE" ? "PAYLOAD_TOO_LARGE" : "SCRIPT_ERROR",
        };
        if (typeof e.stack === "string") error.stack = mapStack(e.stack);
        return { type: "fail", error };
      }
      default:
        throw new TypeError(`unknown command type ${String(c.t)}`);
    }
  });
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
