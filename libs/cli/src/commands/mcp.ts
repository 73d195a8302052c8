import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { client } from "../client.js";
import { createMcpServer } from "../mcp/server.js";

/**
 * `rewind mcp`: the agent tools (list_runs, get_run, replay_run, retry_run) over MCP on stdio,
 * talking to REWIND_URL with REWIND_TOKEN. Serves until the client closes standard input.
 */
export async function mcpCommand(): Promise<number> {
  // Standard output carries the protocol and nothing else: anything a module might print goes
  // to standard error instead of corrupting a message.
  console.log = console.info = console.debug = console.error;
  const api = client();
  const server = createMcpServer(api, "0.1.0");
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
    process.stdin.once("end", () => void server.close());
  });
  await server.connect(transport);
  process.stderr.write(`rewind mcp: serving Rewind at ${api.url} on stdio\n`);
  await closed;
  return 0;
}
