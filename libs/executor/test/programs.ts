/**
 * Generated scripts for the replay property tests: each step is one line of a script, so a
 * journal entry's callsite line says which step caused it. Steps cover every determinism feature:
 * tool calls, Promise.all, Promise.race, timers racing calls, setTimeout chains, setInterval,
 * signals racing timers, tool errors caught, Math.random, crypto.randomUUID, Date arithmetic,
 * console output, and a call left in flight.
 */
import fc from "fast-check";
import { type CallEntry, defineToolset } from "@rewind/core";
import type { ScheduledSignal } from "@rewind/executor";

export type Step =
  | { t: "call"; k: number }
  | { t: "all"; k: number; n: number }
  | { t: "race"; k: number; ms: number; timeout: number }
  | { t: "chain"; k: number; d1: number; d2: number }
  | { t: "interval"; k: number; every: number; times: number }
  | { t: "signal"; k: number; timeout: number; sendAfter: number | null }
  | { t: "catch"; k: number }
  | { t: "random"; k: number }
  | { t: "date"; k: number; ms: number }
  | { t: "log"; k: number }
  | { t: "forget"; k: number; ms: number };

const ms = fc.integer({ min: 0, max: 5_000 });
const step: fc.Arbitrary<Omit<Step, "k">> = fc.oneof(
  fc.record({ t: fc.constant("call" as const) }),
  fc.record({ t: fc.constant("all" as const), n: fc.integer({ min: 2, max: 3 }) }),
  fc.record({ t: fc.constant("race" as const), ms, timeout: ms }),
  fc.record({ t: fc.constant("chain" as const), d1: ms, d2: ms }),
  fc.record({
    t: fc.constant("interval" as const),
    every: fc.integer({ min: 1, max: 2_000 }),
    times: fc.integer({ min: 1, max: 3 }),
  }),
  fc.record({
    t: fc.constant("signal" as const),
    timeout: ms,
    sendAfter: fc.option(fc.integer({ min: 0, max: 40_000 }), { nil: null }),
  }),
  fc.record({ t: fc.constant("catch" as const) }),
  fc.record({ t: fc.constant("random" as const) }),
  fc.record({ t: fc.constant("date" as const), ms: fc.integer({ min: -1e9, max: 1e9 }) }),
  fc.record({ t: fc.constant("log" as const) }),
  fc.record({ t: fc.constant("forget" as const), ms }),
);

export const program = fc
  .array(step, { minLength: 1, maxLength: 9 })
  .map((steps) => steps.map((s, k) => ({ ...s, k: k + 1 }) as Step));

export function render(step: Step): string {
  const k = step.k;
  switch (step.t) {
    case "call":
      return `acc.push((await tools.echo({ k: ${k}, n: acc.length })).k);`;
    case "all": {
      const calls = Array.from({ length: step.n }, (_, i) =>
        i % 2 === 0
          ? `tools.echo({ k: ${k}, i: ${i} })`
          : `tools.slow({ k: ${k}, i: ${i}, ms: ${i * 7} })`,
      );
      return `acc.push((await Promise.all([${calls.join(", ")}])).map((r) => r.i).join("+"));`;
    }
    case "race":
      return `acc.push(await Promise.race([tools.slow({ k: ${k}, ms: ${step.ms} }).then((r) => r.k), sleep(${step.timeout}).then(() => -${k})]));`;
    case "chain":
      return `await new Promise((r) => setTimeout(() => setTimeout(r, ${step.d2}), ${step.d1})); acc.push(Date.now() - t0);`;
    case "interval":
      return `acc.push(await new Promise((r) => { let n = 0; const h = setInterval(() => { if (++n >= ${step.times}) { clearInterval(h); r(n * ${k}); } }, ${step.every}); }));`;
    case "signal":
      return `acc.push(JSON.stringify((await waitForSignal("s${k}", { timeout: ${step.timeout} })) ?? "timeout"));`;
    case "catch":
      return `try { await tools.fail({ k: ${k} }); acc.push("no error"); } catch (e) { acc.push(String((e as Error).message)); }`;
    case "random":
      return `console.log("r${k}", Math.random(), crypto.randomUUID());`;
    case "date":
      return `console.log("d${k}", new Date(Date.now() + ${step.ms}).toISOString(), performance.now(), new Date(2024, 1, 29).getDay());`;
    case "log":
      return `console.log("l${k}", JSON.stringify(acc));`;
    case "forget":
      return `void tools.slow({ k: ${k}, ms: ${step.ms}, forgotten: true });`;
  }
}

/** Line 1 is the header; step k is on line k + 3. */
export const STEP_LINE_OFFSET = 3;

export function source(steps: readonly Step[], override?: { k: number; line: string }): string {
  const lines = steps.map((s) => (override?.k === s.k ? override.line : render(s)));
  return [
    `import { tools, sleep, waitForSignal } from "rewind";`,
    `export default async function main(input: { label: string }) {`,
    `  const acc: unknown[] = [input.label]; const t0 = Date.now();`,
    ...lines.map((l) => `  ${l}`),
    `  return acc;`,
    `}`,
  ].join("\n");
}

export function signalsOf(steps: readonly Step[]): ScheduledSignal[] {
  return steps
    .filter((s): s is Extract<Step, { t: "signal" }> => s.t === "signal" && s.sendAfter !== null)
    .map((s) => ({ afterMs: s.sendAfter!, name: `s${s.k}`, payload: { k: s.k } }))
    .sort((a, b) => a.afterMs - b.afterMs);
}

export const toolset = defineToolset("property", {
  echo: async (args: Record<string, unknown>) => ({ ...args }),
  slow: async (args: Record<string, unknown>) => ({ ...args }),
  fail: async (args: { k: number }) => {
    throw Object.assign(new Error(`tool failed for ${args.k}`), { code: "E_PROPERTY" });
  },
});

/** Virtual latency: `slow` takes `ms` of virtual time, everything else answers at once. */
export function latency(call: CallEntry): number {
  const args = call.args as { ms?: number } | null;
  return call.name === "slow" && typeof args?.ms === "number" ? args.ms : 0;
}
