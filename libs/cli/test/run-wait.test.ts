/**
 * `rewind run --wait` follows the run's journal stream: output as it commits, a line saying what
 * the run waits for when it waits (here a signal, with the command that sends it) instead of
 * going quiet, and the result once the run ends.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineToolset } from "@rewind/sdk";
import { usePlatform } from "./platform-harness.js";

const h = usePlatform([defineToolset("shop", { lookup: async (args: { q: string }) => args.q })]);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it("streams output, says it waits for a signal, and prints the result after it", async () => {
  writeFileSync(
    path.join(h.dir, "approve.ts"),
    `import { tools, waitForSignal } from "rewind";
export default async function main() {
  console.log("asked", await tools.lookup({ q: "order 7" }));
  const ok = await waitForSignal<{ approved: boolean }>("approval");
  return { approved: ok.approved };
}`,
  );
  const running = h.rewind("run", "approve.ts", "--toolset", "shop", "--wait");
  // The run's id, once it waits: the CLI is following it then.
  let id: string | undefined;
  for (let i = 0; i < 300 && id === undefined; i++) {
    const { runs } = await h.api.runs.list({ status: "waiting" });
    id = runs[0]?.id;
    if (id === undefined) await sleep(100);
  }
  expect(id).toBeDefined();
  await sleep(2_000); // past the moment after which the CLI says what the run waits for
  await h.api.runs.signal(id!, "approval", { approved: true });
  const { code, stdout, stderr } = await running;
  expect(code, stderr).toBe(0);
  expect(stdout.split("\n")).toEqual([id, "asked order 7", '{"approved":true}', ""]);
  expect(stderr).toContain(
    `is waiting for a signal (nothing else is pending): send it with rewind signal ${id} <name> [JSON]`,
  );
  expect(stderr).toContain("signal approval received");
});
