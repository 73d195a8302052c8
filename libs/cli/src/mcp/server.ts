import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Rewind } from "@rewind/sdk";
import { registerReplayTool } from "./replay-tool.js";
import { registerRetryTool } from "./retry-tool.js";
import { registerRunTools } from "./run-tools.js";

const INSTRUCTIONS = `Rewind runs TypeScript scripts durably: every tool call a run makes is recorded in its journal.
To fix a run that failed because of a bug in its script:
1. list_runs (status "failed"), then get_run with withScript to read the error, the journal and the script.
2. Correct the script; replay_run with it: it should match the history up to the failure.
3. retry_run with the corrected script (dryRun first if you like): the fork reuses every recorded call
   the new script makes the same way (those tools are not called again) and runs live from the first difference.
4. get_run on the fork with waitSeconds to see it finish.`;

/** The MCP server of `rewind mcp`: agent tools over the platform's HTTP API. */
export function createMcpServer(api: Rewind, version: string): McpServer {
  const server = new McpServer(
    { name: "rewind", version },
    { instructions: INSTRUCTIONS, capabilities: { tools: {} } },
  );
  registerRunTools(server, api);
  registerReplayTool(server, api);
  registerRetryTool(server, api);
  return server;
}
