import { writeFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineToolset } from "@rewind/core";
import { compileScript } from "@rewind/sandbox";
import { usePlatform } from "./platform-harness.js";

const toolset = defineToolset("orders", {
  reserve: async (args: { sku: string }) => ({ held: args.sku }),
});
const ORIGINAL = `import { tools, waitForSignal } from "rewind";
export default async function main(input: { sku: string }) {
  const held = await tools.reserve({ sku: input.sku });
  await waitForSignal("paid");
  return held;
}
`;
const REFACTOR = `import { tools, waitForSignal } from "rewind";
const reserve = (sku: string) => tools.reserve({ sku });
export default async function main({ sku }: { sku: string }) {
  const reservation = await reserve(sku);
  await waitForSignal("paid");
  return reservation;
}
`;
/** Five runs of the original script, each waiting for its payment. */
const h = usePlatform([toolset], async ({ api }) => {
  const script = await compileScript({ source: ORIGINAL, filename: "order.ts" });
  for (let i = 0; i < 5; i++) {
    const { id } = await api.runs.start({ script, input: { sku: `sku-${i}` }, toolset: "orders" });
    const deadline = Date.now() + 10_000;
    while ((await api.runs.get(id)).status !== "waiting") {
      if (Date.now() > deadline) throw new Error(`run ${id} did not reach waiting`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
});

it("gates a deploy: a refactor is compatible with every open run, a changed call is not", async () => {
  const refactor = path.join(h.dir, "refactor.ts");
  writeFileSync(refactor, REFACTOR);
  const ok = await h.rewind("replay", "--all", "--script", refactor);
  expect(ok.stderr).toContain("5 of 5 runs compatible with refactor.ts");
  expect(ok.code).toBe(0);
  expect(ok.stdout.trim().split("\n")).toHaveLength(5);

  const changed = path.join(h.dir, "changed.ts");
  writeFileSync(
    changed,
    ORIGINAL.replace("{ sku: input.sku }", "{ sku: input.sku.toUpperCase() }"),
  );
  const bad = await h.rewind("replay", "--all", "--script", changed, "--status", "waiting");
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain("0 of 5 runs compatible");
  expect(bad.stdout).toMatch(
    /diverges at seq 2\s+call reserve\(\{ sku: "SKU-0" \}\)\s+changed\.ts:3:\d+/,
  );
});
