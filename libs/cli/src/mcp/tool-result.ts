import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { RewindError } from "@rewind/core";
import { RewindApiError } from "@rewind/sdk";

/**
 * A tool's answer: readable text for the model, and the same facts as structured content for
 * clients that want fields (each tool declares their shape as its output schema).
 */
export function answer(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text }], structuredContent: structured };
}

/**
 * An error as an MCP tool error (isError), not a protocol error: the model reads it and can act
 * on it. It carries the API's error code and message, which says what to do next.
 */
export function toolError(error: unknown): CallToolResult {
  const coded =
    error instanceof RewindApiError || error instanceof RewindError
      ? `${error.code}: ${error.message}`
      : `unexpected error: ${error instanceof Error ? error.message : String(error)}`;
  return { content: [{ type: "text", text: coded }], isError: true };
}

/** Runs a tool's handler, turning anything it throws into a tool error. */
export function guarded<A>(
  handler: (args: A) => Promise<CallToolResult>,
): (args: A) => Promise<CallToolResult> {
  return async (args) => {
    try {
      return await handler(args);
    } catch (error) {
      return toolError(error);
    }
  };
}
