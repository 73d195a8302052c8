/**
 * Change notices across processes (issue 18): `rewind api` and `rewind worker` as real processes
 * on a real Redis. A client waiting on a run's result learns of the commit that ends it from the
 * worker's notice, long before the API's backstop poll (set to 3 s here so the two cannot be
 * confused); with the worker's notices cut off, the result still arrives, within one backstop poll.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { compileScript, type CompiledScript } from "@rewind/sandbox";
import { Cluster, until } from "./cluster-harness.js";

const BACKSTOP_MS = 3_000;
const cluster = new Cluster({ env: { REWIND_POLL_MS: String(BACKSTOP_MS) } });
let script: CompiledScript;

beforeAll(async () => {
  script = await compileScript({
    filename: "notices.ts",
    source: `import { tools, waitForSignal } from "rewind";
export default async function main() {
  const go = await waitForSignal<string>("go");
  await tools.lookup({ q: go });
  return go;
}`,
  });
  await cluster.start();
}, 120_000);

afterAll(() => cluster.close(), 60_000);

/** Signals a run waiting on "go", and times how long a client's waiting request then takes. */
async function signalToResult(): Promise<number> {
  const { id } = await cluster.api.runs.start({ script, toolset: "shop" });
  await until(
    `${id} to wait for its signal`,
    async () => (await cluster.api.runs.get(id)).status === "waiting",
    20_000,
  );
  const answer = cluster.api.runs.result(id, "20s");
  // The request is waiting (its first read done) before the signal goes in.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const signalled = performance.now();
  await cluster.api.runs.signal(id, "go", "now");
  const result = await answer;
  expect(result).toMatchObject({ status: "completed", result: "now" });
  return performance.now() - signalled;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

it("wakes a waiting client on the worker's notice, not on the backstop poll", async () => {
  const { worker } = await cluster.startWorker();
  const times: number[] = [];
  for (let i = 0; i < 5; i++) times.push(await signalToResult());
  // Signal POST → inbox → doorbell → activation → two commits (signal, call result + end) →
  // notice → read: tens of ms on an idle machine; far under the 3 s backstop on a busy one.
  expect(median(times), `signal → result: ${times.map(Math.round).join(", ")} ms`).toBeLessThan(
    500,
  );
  await worker.kill("SIGTERM");
}, 120_000);

it("still answers within one backstop poll when the worker publishes no notices", async () => {
  await cluster.startWorker({ env: { REWIND_CHANGE_NOTICES: "off" } });
  const times: number[] = [];
  for (let i = 0; i < 3; i++) times.push(await signalToResult());
  for (const ms of times)
    expect(ms, `signal → result: ${times.map(Math.round).join(", ")} ms`).toBeLessThan(
      BACKSTOP_MS + 1_500,
    );
}, 120_000);
