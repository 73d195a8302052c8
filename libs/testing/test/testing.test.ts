import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JournalEntry } from "@rewind/core";
import { startDevPlatform } from "@rewind/dev";
import { compileScript } from "@rewind/sandbox";
import tools from "../../../examples/tools.js";
import { Rewind } from "@rewind/sdk";
import { CassetteMissError, runWithCassette, runWithMocks } from "../src/index.js";

const examples = fileURLToPath(new URL("../../../examples/", import.meta.url));
let dir: string;
let cassette: JournalEntry[];
let recorded: { result: unknown };

beforeAll(async () => {
  // A real run on the real platform, its journal exported as a cassette.
  dir = mkdtempSync(path.join(tmpdir(), "rewind-cassette-"));
  const platform = await startDevPlatform({ port: 0, dataDir: dir, toolsets: [tools] });
  try {
    const api = new Rewind({ url: platform.url, token: platform.token });
    const agent = await compileScript({ file: path.join(examples, "agent.ts") });
    const { id } = await api.runs.start({
      script: agent,
      input: { goal: "ship it" },
      toolset: "shop",
    });
    recorded = (await api.runs.result(id, "20s")) as { result: unknown };
    cassette = (await api.runs.journal(id)).entries;
  } finally {
    await platform.close();
  }
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("@rewind/testing", () => {
  it("reproduces a real run from its cassette, with no tool behind it", async () => {
    const run = await runWithCassette({ script: path.join(examples, "agent.ts"), cassette });
    expect(run.status).toBe("completed");
    expect(run.result).toEqual(recorded.result);
    expect(run.output).toEqual(cassette.flatMap((e) => (e.kind === "output" ? [e.text] : [])));
  });

  it("fails a test whose script makes a call the cassette does not hold, naming the nearest one", async () => {
    const changed = await compileScript({
      source: `import { tools } from "rewind";
export default async () => tools.think({ step: 1, notes: ["something new"] });`,
      filename: "changed.ts",
    });
    const attempt = runWithCassette({ script: changed, cassette });
    await expect(attempt).rejects.toBeInstanceOf(CassetteMissError);
    await expect(attempt).rejects.toThrow(
      /tools\.think\(\{ notes: \["something new"\], step: 1 \}\) is not in the cassette; the nearest recorded call is tools\.think\(\{ notes: \[\], step: 1 \}\) at seq 2 at agent\.ts:\d+:\d+/,
    );
  });

  it("runs a ten-day workflow against mock tools in milliseconds", async () => {
    const began = performance.now();
    const run = await runWithMocks({
      script: path.join(examples, "order.ts"),
      input: { orderId: "T1" },
      tools: {
        charge: async (args: { orderId: string }) => ({ id: `ch_${args.orderId}` }),
        sendEmail: async () => ({ sent: true }),
      },
      signals: [{ afterMs: 3_600_000, name: "approval", payload: { approved: true } }],
    });
    expect(run.status).toBe("completed");
    expect(run.result).toMatchObject({ status: "shipped" });
    expect(run.output).toEqual(["shipping ch_T1\n"]);
    expect(performance.now() - began).toBeLessThan(2_000);
  });
});
