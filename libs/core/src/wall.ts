import type { ErrorData } from "./entries.js";
import type { Json } from "./json.js";

/*
 * The protocol across the sandbox wall, as the host sees it. Ids are the guest's own (1, 2, 3 …
 * in emission order); the replay engine maps them to journal seqs.
 */

/** What the host asks of a script instance: deliver one outside event. */
export type GuestEvent =
  | { type: "call.result"; id: number; at: number; result: Json }
  | { type: "call.error"; id: number; at: number; error: ErrorData }
  | { type: "timer.fired"; id: number; at: number }
  | { type: "signal"; name: string; at: number; payload: Json };

/** What a script instance emits, validated and with callsites mapped to the script's sources. */
export type GuestCommand =
  | { type: "call"; id: number; name: string; args: Json; callsite: string }
  | { type: "timer.set"; id: number; due: number; callsite: string }
  | { type: "timer.cancel"; id: number; callsite: string }
  | { type: "output"; stream: "stdout" | "stderr"; text: string; callsite: string }
  | { type: "complete"; result: Json }
  | { type: "fail"; error: ErrorData };
