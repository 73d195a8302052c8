/**
 * `rewind mcp` driven by a real MCP client (the SDK's Client over stdio) spawning the built CLI
 * against a real platform: the acceptance flow, a model fixing step 7 of a failed run.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { defineToolset } from "@rewind/core";
import { compileScript } from "@rewind/sandbox";
import { usePlatform } from "./platform-harness.js";

/** The counting tool server: every call that reaches the outside world, by tool. */
const calls = { price: 0, checkout: 0 };
const toolset = defineToolset("shop", {
  price: async (args: { item: string }) => {
    calls.price++;
    return { item: args.item, cents: 100 + args.item.length };
  },
  checkout: async (args: { cents: number }) => {
    calls.checkout++;
    if (!Number.isInteger(args.cents))
      throw new Error(`cents must be a whole number, got ${args.cents}`);
    return { receipt: `r-${args.cents}` };
  },
});

/** Six prices, then a checkout: the bug sends dollars instead of cents to the 7th call. */
const script = (fixed: boolean) => `import { tools } from "rewind";
export default async function main(input: { items: string[] }) {
  let total = 0;
  for (const item of input.items) {
    const price = await tools.price({ item });
    total += price.cents;
  }
  const paid = await tools.checkout({ cents: ${fixed ? "total" : "total / 100"} });
  return { total, receipt: paid.receipt };
}
`;
const ITEMS = ["apple", "pear", "fig", "plum", "kiwi", "lime"];

const h = usePlatform([toolset]);
let mcp: Client;
let transport: StdioClientTransport;
const protocolErrors: Error[] = [];
let stderr = "";

beforeAll(async () => {
  transport = new StdioClientTransport({
    command: process.execPath,
    args: [h.cli, "mcp"],
    env: h.env as Record<string, string>,
    cwd: h.dir,
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  mcp = new Client({ name: "rewind-test", version: "1.0.0" });
  mcp.onerror = (error) => protocolErrors.push(error);
  await mcp.connect(transport);
}, 30_000);
afterAll(async () => {
  await mcp?.close();
});

const call = async (name: string, args: Record<string, unknown>) =>
  (await mcp.callTool({ name, arguments: args })) as CallToolResult;
const text = (result: CallToolResult) =>
  result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");

it("lists its four tools, each with a description and an input schema", async () => {
  const { tools } = await mcp.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual([
    "get_run",
    "list_runs",
    "replay_run",
    "retry_run",
  ]);
  for (const tool of tools) {
    expect(tool.description!.length).toBeGreaterThan(80);
    expect(tool.inputSchema.type).toBe("object");
  }
  const retry = tools.find((t) => t.name === "retry_run")!;
  expect(retry.inputSchema.required).toEqual(expect.arrayContaining(["runId", "script"]));
  expect(mcp.getInstructions()).toContain("retry_run");
});

it("fixes a run that failed at its 7th call: replay shows the divergence, retry reuses calls 1-6", async () => {
  const { id } = await h.api.runs.start({
    script: await compileScript({ source: script(false), filename: "order.ts" }),
    input: { items: ITEMS },
    toolset: "shop",
  });
  expect(await h.api.runs.result(id, "20s")).toMatchObject({ status: "failed" });
  const before = { ...calls };
  expect(before.price).toBe(6);

  const listed = await call("list_runs", { status: "failed" });
  expect(listed.isError).toBeFalsy();
  expect(listed.structuredContent).toMatchObject({ runs: [{ id, status: "failed" }] });
  expect(text(listed)).toContain(`${id}  failed`);

  const shown = await call("get_run", { runId: id, withScript: true });
  expect(shown.isError).toBeFalsy();
  const shownText = text(shown);
  expect(shownText).toContain(`run ${id}: failed`);
  expect(shownText).toMatch(/error SCRIPT_ERROR: .*cents must be a whole number, got 6\.24/);
  expect(shownText).toMatch(/#2 call price\(\{ item: "apple" \}\)\s+@ order\.ts:5:\d+/);
  expect(shownText).toMatch(/#14 call checkout\(\{ cents: 6\.24 \}\)\s+@ order\.ts:8:\d+/);
  expect(shownText).toMatch(/#15 call\.error seq 14 ✗ cents must be a whole number/);
  expect(shown.structuredContent).toMatchObject({
    run: { id, status: "failed" },
    script: { entry: "order.ts", source: script(false) },
  });
  expect((shown.structuredContent as { journal: unknown[] }).journal).toHaveLength(16);

  const own = await call("replay_run", { runId: id });
  expect(own.structuredContent).toEqual({ compatible: true, entries: 16 });
  expect(text(own)).toContain("the run's own script is compatible");

  const check = await call("replay_run", { runId: id, script: script(true), filename: "fixed.ts" });
  expect(check.isError).toBeFalsy();
  expect(check.structuredContent).toMatchObject({
    compatible: false,
    divergence: {
      seq: 14,
      matched: 13,
      recorded: {
        label: "call checkout({ cents: 6.24 })",
        callsite: expect.stringMatching(/^order\.ts:8:\d+$/),
        line: "const paid = await tools.checkout({ cents: total / 100 });",
      },
      replayed: {
        label: "call checkout({ cents: 624 })",
        callsite: expect.stringMatching(/^fixed\.ts:8:\d+$/),
        line: "const paid = await tools.checkout({ cents: total });",
      },
    },
  });
  expect(text(check)).toContain("diverges from");
  expect(calls).toEqual(before); // checks call nothing

  const dry = await call("retry_run", { runId: id, script: script(true), dryRun: true });
  expect(dry.isError).toBeFalsy();
  expect(dry.structuredContent).toMatchObject({
    dryRun: true,
    reused: 12,
    firstLive: { seq: 14, label: "call checkout({ cents: 624 })" },
    runAgain: [],
  });
  expect(dry.structuredContent).not.toHaveProperty("forkId");
  expect((await h.api.runs.list()).runs).toHaveLength(1); // a dry run starts nothing

  const retried = await call("retry_run", { runId: id, script: script(true) });
  expect(retried.isError).toBeFalsy();
  const forkId = (retried.structuredContent as { forkId: string }).forkId;
  expect(forkId).toMatch(/^run_/);
  expect(text(retried)).toMatch(/reuses 12 recorded entries/);
  expect(text(retried)).toMatch(/runs live from call checkout\(\{ cents: 624 \}\) at seq 14/);

  const fork = await call("get_run", { runId: forkId, waitSeconds: 20 });
  expect(fork.structuredContent).toMatchObject({
    run: {
      id: forkId,
      status: "completed",
      result: { total: 624, receipt: "r-624" },
      parent: { runId: id },
    },
  });
  // The counting tools: the six prices were not asked again; only the checkout ran live.
  expect(calls).toEqual({ price: before.price, checkout: before.checkout + 1 });
});

it("answers bad input with a tool error carrying the API's code and what to do", async () => {
  const unknown = await call("get_run", { runId: "run_doesnotexist" });
  expect(unknown.isError).toBe(true);
  expect(text(unknown)).toMatch(/^NOT_FOUND: .*run_doesnotexist/);

  const { runs } = await h.api.runs.list({ status: "failed" });
  const broken = await call("retry_run", {
    runId: runs[0]!.id,
    script: "export default async function main( {\n",
  });
  expect(broken.isError).toBe(true);
  expect(text(broken)).toMatch(
    /^COMPILE_ERROR: The script fixed\.ts does not compile:\nfixed\.ts:2:1: /,
  );

  const notFound = await call("replay_run", { runId: "run_doesnotexist", script: script(true) });
  expect(text(notFound)).toMatch(/^NOT_FOUND: /);

  const badStatus = await call("list_runs", { status: "sleeping" });
  expect(badStatus.isError).toBe(true);
  expect(text(badStatus)).toMatch(/Invalid arguments for tool list_runs/);

  const badName = await call("replay_run", { runId: runs[0]!.id, script: "x", filename: "../x" });
  expect(text(badName)).toMatch(/^INVALID_INPUT: filename "\.\.\/x"/);
});

it("writes only protocol messages to stdout, and its log to stderr", () => {
  expect(protocolErrors).toEqual([]);
  expect(stderr).toContain("rewind mcp: serving Rewind at http://");
});
