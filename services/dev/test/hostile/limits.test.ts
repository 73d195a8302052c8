/**
 * A tenant pushing past its namespace's limits: each is refused or fails the run with
 * LIMIT_EXCEEDED naming the limit, its value and how to raise it; the platform keeps serving and
 * other runs complete (the invariants checked after each case, with the limits reset). Each hit
 * is counted in rewind_limits_exceeded_total{limit}, as /metrics serves it.
 */
import { compileScript } from "@rewind/sandbox";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openHostilePlatform, type HostilePlatform } from "./harness.js";

let h: HostilePlatform;
let scraper: { authorization: string };
beforeAll(async () => {
  h = await openHostilePlatform();
  const token = await h.platform.store.createToken("ops", "prometheus", ["metrics"]);
  scraper = { authorization: `Bearer ${token}` };
}, 180_000);
let countedBefore = new Map<string, number>();
beforeEach(async () => {
  countedBefore = await limitHits();
});
afterAll(async () => h?.close(), 60_000);
afterEach(async () => {
  await setLimits({
    runsInFlight: null,
    startsPerSecond: null,
    journalEntries: null,
    journalBytes: null,
    outputBytes: null,
    timers: null,
  });
  await h.check();
}, 60_000);

async function setLimits(limits: Record<string, number | null>) {
  const response = await fetch(`${h.url}/v1/limits`, {
    method: "POST",
    headers: { ...h.auth, "content-type": "application/json" },
    body: JSON.stringify(limits),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return response.json();
}

/** Runs `source` and answers its result once it ended. */
async function runToEnd(source: string) {
  const script = await compileScript({ source, filename: "hostile.ts" });
  const { id } = await h.api.runs.start({ script, input: {} });
  h.runs.add(id);
  for (let i = 0; i < 10; i++) {
    const result = await h.api.runs.result(id, "20s");
    if (result.status === "completed" || result.status === "failed") return result;
  }
  throw new Error(`run ${id} did not end`);
}

/** An error answer of the API. */
interface ErrorBody {
  error: { code?: string; message: string };
}

/** rewind_limits_exceeded_total by limit, as /metrics serves it to a scraper. */
async function limitHits(): Promise<Map<string, number>> {
  const response = await fetch(`${h.url}/metrics`, { headers: scraper });
  expect(response.status).toBe(200);
  const hits = new Map<string, number>();
  for (const [, limit, count] of (await response.text()).matchAll(
    /^rewind_limits_exceeded_total\{limit="(\w+)"\} (\d+)/gm,
  ))
    hits.set(limit!, Number(count));
  return hits;
}

async function expectLimit(
  error: { code?: string; message: string } | undefined,
  name: string,
  value: number,
) {
  expect(error?.code).toBe("LIMIT_EXCEEDED");
  expect(error?.message).toContain(`Limit ${name}`);
  expect(error?.message).toContain(`at most ${value}`);
  expect(error?.message).toContain(`rewind limits set ${name}=`);
  // Counted, in a moment: the executor counts off its hot path.
  const before = countedBefore.get(name) ?? 0;
  let now = before;
  for (let i = 0; i < 50 && now <= before; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    now = (await limitHits()).get(name) ?? 0;
  }
  expect(now, `rewind_limits_exceeded_total{limit="${name}"}`).toBeGreaterThan(before);
}

describe("limits inside a run fail it, named", () => {
  it("timers: a run arming a thousand timers fails at the limit", async () => {
    await setLimits({ timers: 20 });
    const result = await runToEnd(`export default async function main() {
      for (let i = 0; i < 1000; i++) setTimeout(() => {}, 60_000 + i);
      await new Promise((r) => setTimeout(r, 10));
      return "armed them all";
    }`);
    expect(result.status).toBe("failed");
    await expectLimit(result.error, "timers", 20);
  });

  it("outputBytes: a run printing 200 KB fails at 10,000 bytes", async () => {
    await setLimits({ outputBytes: 10_000 });
    const result = await runToEnd(`export default async function main() {
      for (let i = 0; i < 200; i++) console.log("x".repeat(1000));
      return "printed";
    }`);
    expect(result.status).toBe("failed");
    await expectLimit(result.error, "outputBytes", 10000);
  });

  it("journalEntries and journalBytes: a run that journals without end fails", async () => {
    await setLimits({ journalEntries: 30 });
    const entries = await runToEnd(`import { sleep } from "rewind";
    export default async function main() {
      for (let i = 0; i < 100; i++) await sleep(1);
      return "slept";
    }`);
    expect(entries.status).toBe("failed");
    await expectLimit(entries.error, "journalEntries", 30);
    await setLimits({ journalEntries: null, journalBytes: 20_000 });
    const bytes = await runToEnd(`export default async function main() {
      for (let i = 0; i < 100; i++) console.log("y".repeat(500));
      return "printed";
    }`);
    expect(bytes.status).toBe("failed");
    await expectLimit(bytes.error, "journalBytes", 20000);
  });
});

describe("limits on starts refuse them with 429", () => {
  it("runsInFlight: a third open run is refused while two wait", async () => {
    await setLimits({ runsInFlight: 2 });
    const waits = await compileScript({
      source: `import { waitForSignal } from "rewind";
      export default async function main() { return await waitForSignal("go"); }`,
      filename: "waits.ts",
    });
    const open: string[] = [];
    for (let i = 0; i < 2; i++) {
      const { id } = await h.api.runs.start({ script: waits, input: {} });
      h.runs.add(id);
      open.push(id);
    }
    const refused = await fetch(`${h.url}/v1/runs`, {
      method: "POST",
      headers: { ...h.auth, "content-type": "application/json" },
      body: JSON.stringify({ script: waits, input: {} }),
    });
    expect(refused.status).toBe(429);
    await expectLimit(((await refused.json()) as ErrorBody).error, "runsInFlight", 2);
    for (const id of open) await h.api.runs.cancel(id);
    for (const id of open)
      for (let i = 0; i < 10 && (await h.api.runs.result(id, "20s")).status !== "cancelled"; i++);
  });

  it("startsPerSecond: a burst past one a second is refused, with Retry-After", async () => {
    await setLimits({ startsPerSecond: 1 });
    let refused: Response | undefined;
    for (let i = 0; i < 10 && refused === undefined; i++) {
      const response = await fetch(`${h.url}/v1/runs`, {
        method: "POST",
        headers: { ...h.auth, "content-type": "application/json" },
        body: JSON.stringify({ script: h.honest, input: { n: i } }),
      });
      if (response.status === 201) h.runs.add(((await response.json()) as { id: string }).id);
      else refused = response;
    }
    expect(refused?.status).toBe(429);
    expect(refused?.headers.get("retry-after")).toBe("1");
    await expectLimit(((await refused!.json()) as ErrorBody).error, "startsPerSecond", 1);
  });

  it("a limit is validated at the door, naming the field", async () => {
    const response = await fetch(`${h.url}/v1/limits`, {
      method: "POST",
      headers: { ...h.auth, "content-type": "application/json" },
      body: JSON.stringify({ timers: -1 }),
    });
    expect(response.status).toBe(422);
    expect(((await response.json()) as ErrorBody).error.message).toContain("timers");
  });
});
