import { afterAll, describe, expect, it } from "vitest";
import { type CallEntry, defineToolset, type JournalEntry, type ToolContext } from "@rewind/core";
import { runInProcess } from "@rewind/executor";
import { Sandbox, compileScript } from "@rewind/sandbox";

const sandbox = new Sandbox();
afterAll(() => sandbox.dispose());
const SEED = "ab".repeat(32);

/** A toolset that counts what it sees: callIds and the bodies sent with each. */
function countingTools() {
  const seen: { tool: string; callId: string; body: string }[] = [];
  const record = (tool: string) => async (args: unknown, ctx: ToolContext) => {
    seen.push({ tool, callId: ctx.callId, body: JSON.stringify(args) });
    return { tool, args };
  };
  const toolset = defineToolset("counting", {
    charge: record("charge"),
    email: { run: record("email"), unsafeToRepeat: true },
    flaky: {
      run: async (args: unknown, ctx: ToolContext) => {
        seen.push({ tool: "flaky", callId: ctx.callId, body: String(ctx.attempt) });
        if (ctx.attempt < 3) throw new Error(`attempt ${ctx.attempt} failed`);
        return { attempt: ctx.attempt };
      },
      retries: 3,
    },
    hang: { run: () => new Promise(() => {}), timeout: 50 },
  });
  return { seen, toolset };
}

async function run(source: string, options: Partial<Parameters<typeof runInProcess>[0]> = {}) {
  const script = await compileScript({ source, filename: "g.ts" });
  return runInProcess({ script, sandbox, seed: SEED, ...options });
}

const kinds = (journal: readonly JournalEntry[]) => journal.map((e) => e.kind);

describe("the executor's guarantees", () => {
  it("does not end a run while a forgotten call is in flight, and records its outcome", async () => {
    const { toolset } = countingTools();
    const result = await run(
      `import { tools } from "rewind";
       export default async () => { void tools.charge({ n: 1 }).then(() => tools.charge({ n: 2 })); return "early"; }`,
      { toolset, latency: () => 1000 },
    );
    expect(result.status).toBe("completed");
    expect(kinds(result.journal)).toEqual([
      "run.started",
      "call",
      "call.result",
      "call",
      "call.result",
      "run.completed",
    ]);
    expect(result.journal.at(-1)!.at - result.journal[0]!.at).toBe(2000);
  });

  it("runs a call in flight at a crash again with the same callId, and a completed one never", async () => {
    const { seen, toolset } = countingTools();
    const source = `import { tools } from "rewind";
      export default async () => [await tools.charge({ a: 1 }), await tools.charge({ a: 2 })];`;
    const full = await run(source, { toolset });
    const secondCall = full.journal.find(
      (e): e is CallEntry => e.kind === "call" && (e.args as { a: number }).a === 2,
    )!;
    seen.length = 0;
    // The crash came after the second call was journaled, before its result was.
    const resumed = await run(source, { toolset, resume: full.journal.slice(0, secondCall.seq) });
    expect(resumed.status).toBe("completed");
    expect(seen).toEqual([{ tool: "charge", callId: secondCall.callId, body: '{"a":2}' }]);
    expect(resumed.journal).toEqual(full.journal);
  });

  it("never calls an unsafeToRepeat tool twice: the run fails with UNSAFE_TO_REPEAT naming the call", async () => {
    const { seen, toolset } = countingTools();
    const source = `import { tools } from "rewind";
      export default async () => tools.email({ to: "a@example.com" });`;
    const full = await run(source, { toolset });
    const call = full.journal.find((e): e is CallEntry => e.kind === "call")!;
    seen.length = 0;
    const resumed = await run(source, { toolset, resume: full.journal.slice(0, call.seq) });
    expect(seen).toEqual([]);
    expect(resumed.status).toBe("failed");
    expect(resumed.error?.code).toBe("UNSAFE_TO_REPEAT");
    expect(resumed.error?.message).toContain(`tools.email() at seq ${call.seq}`);
    expect(resumed.error?.message).toContain(call.callId);
  });

  it("fails a call to an unknown tool with TOOL_NOT_FOUND naming tool and toolset, recording calls in flight", async () => {
    const { seen, toolset } = countingTools();
    const source = `import { tools } from "rewind";
       export default async () => Promise.all([tools.charge({}), tools.refund({})]);`;
    const result = await run(source, { toolset });
    expect(result.status).toBe("failed");
    expect(result.error?.code).toBe("TOOL_NOT_FOUND");
    expect(result.error?.message).toMatch(
      /tools\.refund\(\).*toolset "counting" has no tool "refund"/,
    );
    expect(kinds(result.journal)).toEqual([
      "run.started",
      "call",
      "call",
      "run.failed",
      "call.result",
    ]);
    // The journal of a verdict replays to the same verdict, calling nothing.
    seen.length = 0;
    const replayed = await run(source, { toolset, resume: result.journal });
    expect(replayed.status).toBe("failed");
    expect(replayed.journal).toEqual(result.journal);
    expect(seen).toEqual([]);
  });

  it("explains that fetch needs a fetch tool, and journals fetch as a call when there is one", async () => {
    const source = `export default async () => (await fetch("https://example.com/x")).json();`;
    const without = await run(source);
    expect(without.error?.code).toBe("TOOL_NOT_FOUND");
    expect(without.error?.message).toContain("add a `fetch` tool");
    const toolset = defineToolset("web", {
      fetch: async () => ({ status: 200, body: '{"ok":true}' }),
    });
    const withFetch = await run(source, { toolset });
    expect(withFetch.result).toEqual({ ok: true });
    expect(withFetch.journal[1]).toMatchObject({
      kind: "call",
      name: "fetch",
      args: { url: "https://example.com/x", method: "GET" },
    });
  });

  it("retries a failing tool with backoff and times out a hanging one", async () => {
    const { seen, toolset } = countingTools();
    const result = await run(
      `import { tools } from "rewind";
       export default async () => { const a = await tools.flaky({}); try { await tools.hang({}); } catch (e) { return [a, e.code, e.message]; } };`,
      { toolset },
    );
    expect(seen.filter((s) => s.tool === "flaky").map((s) => s.body)).toEqual(["1", "2", "3"]);
    expect(result.result).toEqual([
      { attempt: 3 },
      "TOOL_TIMEOUT",
      "Tool hang did not answer within 50 ms",
    ]);
    // The journal says how many tries each outcome took: three for flaky's result, and none
    // noted for the timeout (tried once).
    const outcomes = result.journal.filter(
      (e) => e.kind === "call.result" || e.kind === "call.error",
    );
    expect(outcomes.map((e) => [e.kind, "attempts" in e ? e.attempts : undefined])).toEqual([
      ["call.result", 3],
      ["call.error", undefined],
    ]);
  });

  it("waits out a tool's timeout past 2^31-1 ms instead of timing it out at once", async () => {
    // Node fires a setTimeout past 2^31-1 ms (24.8 days) after 1 ms: a tool with a 30-day
    // timeout answering in 50 ms failed every call with TOOL_TIMEOUT (issue 17's long waits).
    const toolset = defineToolset("slow", {
      answer: {
        run: () => new Promise((resolve) => setTimeout(() => resolve({ ok: true }), 50)),
        timeout: "30d",
      },
    });
    const result = await run(
      `import { tools } from "rewind";
       export default async () => tools.answer({});`,
      { toolset },
    );
    expect(result.error).toBeUndefined();
    expect(result.result).toEqual({ ok: true });
  });

  it("shows a script every value in canonical key order, live and on replay alike", async () => {
    const toolset = defineToolset("keys", {
      get: async () => ({ zebra: 1, apple: 2, mango: { y: 1, b: 2 } }),
    });
    const source = `import { tools } from "rewind";
      export default async (input: object) => {
        const r = await tools.get({ z: 1, a: 2 });
        return [Object.keys(input), Object.keys(r), Object.keys(r.mango)];
      };`;
    const live = await run(source, { toolset, input: { second: 2, first: 1 } });
    const keys = [
      ["first", "second"],
      ["apple", "mango", "zebra"],
      ["b", "y"],
    ];
    expect(live.result).toEqual(keys);
    expect(live.journal[1]).toMatchObject({ kind: "call", args: { a: 2, z: 1 } });
    expect(Object.keys((live.journal[1] as CallEntry).args as object)).toEqual(["a", "z"]);
    const replayed = await run(source, { toolset, resume: live.journal.slice(0, 3) });
    expect(replayed.result).toEqual(keys);
  });

  it("sleeps ten days of virtual time in milliseconds", async () => {
    const started = performance.now();
    const result = await run(`import { sleep } from "rewind";
      export default async () => { const t = Date.now(); await sleep("10d"); return Date.now() - t; }`);
    expect(result.result).toBe(10 * 86_400_000);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it("leaves a run waiting when it awaits a signal nobody sends, and delivers one sent later", async () => {
    const source = `import { waitForSignal } from "rewind";
      export default async () => waitForSignal("go");`;
    expect((await run(source)).status).toBe("waiting");
    const result = await run(source, {
      signals: [{ afterMs: 3_600_000, name: "go", payload: { ok: 1 } }],
    });
    expect(result.result).toEqual({ ok: 1 });
    expect(result.journal.at(-1)!.at - result.journal[0]!.at).toBe(3_600_000);
  });
});

describe("divergence reports", () => {
  const base = `import { tools } from "rewind";
export default async function main() {
  const a = await tools.charge({ cents: 1200 });
  const [b, c] = await Promise.all([tools.charge({ n: 1 }), tools.charge({ n: 2 })]);
  console.log("charged", a.args.cents);
  return [b, c];
}`;

  async function diverge(changed: string) {
    const { toolset } = countingTools();
    const original = await run(base, { toolset });
    expect(original.status).toBe("completed");
    return run(changed, { toolset, resume: original.journal });
  }

  it("accepts a refactor that keeps the calls", async () => {
    const refactor = `import { tools } from "rewind";
const charge = (body: object) => tools.charge(body);
export default async function main() {
  const first = await charge({ cents: 1200 });
  const both = await Promise.all([1, 2].map((n) => charge({ n })));
  console.log("charged", first.args.cents);
  return both;
}`;
    expect((await diverge(refactor)).status).toBe("completed");
  });

  it.each([
    [
      "a changed argument",
      base.replace("cents: 1200", "cents: 1300"),
      2,
      "call charge({ cents: 1300 })",
    ],
    [
      "a removed call",
      base.replace(
        "const a = await tools.charge({ cents: 1200 });",
        "const a = { args: { cents: 1200 } };",
      ),
      2,
      "call charge({ n: 1 })",
    ],
    [
      "an added call",
      base.replace("const a =", "await tools.charge({ extra: true }); const a ="),
      2,
      "call charge({ extra: true })",
    ],
    [
      "a reordered Promise.all",
      base.replace(
        "[tools.charge({ n: 1 }), tools.charge({ n: 2 })]",
        "[tools.charge({ n: 2 }), tools.charge({ n: 1 })]",
      ),
      4,
      "call charge({ n: 2 })",
    ],
    [
      "a changed output line",
      base.replace('"charged"', '"paid"'),
      8,
      'output stdout "paid 1200\\n"',
    ],
  ])("names the first differing entry for %s", async (_what, changed, seq, replayed) => {
    const result = await diverge(changed);
    expect(result.status).toBe("diverged");
    expect(result.divergence?.seq).toBe(seq);
    expect(result.divergence?.matched).toBe(seq - 1);
    expect(result.divergence?.replayed?.label).toBe(replayed);
    expect(result.divergence?.recorded.callsite).toMatch(/^g\.ts:\d+:\d+$/);
    expect(result.divergence?.replayed?.callsite).toMatch(/^g\.ts:\d+:\d+$/);
  });
});
