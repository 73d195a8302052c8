import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { JournalEntry, OutputEntry } from "@rewind/core";
import { runInProcess, type InProcessResult } from "@rewind/executor";
import { toJournalFile } from "@rewind/journal";
import { Sandbox, compileScript } from "@rewind/sandbox";
import {
  STEP_LINE_OFFSET,
  latency,
  program,
  render,
  signalsOf,
  source,
  toolset,
  type Step,
} from "./programs.js";

const sandbox = new Sandbox();
afterAll(() => sandbox.dispose());

const SEED = "5eed".repeat(16);

async function execute(steps: readonly Step[], code: string, resume?: readonly JournalEntry[]) {
  const script = await compileScript({ source: code, filename: "p.ts" });
  const published: string[] = [];
  const result = await runInProcess({
    script,
    sandbox,
    toolset,
    input: { label: "prop" },
    seed: SEED,
    signals: signalsOf(steps),
    latency,
    ...(resume ? { resume } : {}),
    onOutput: (entry: OutputEntry) => published.push(entry.text),
  });
  return { result, published };
}

const outputs = (journal: readonly JournalEntry[]) =>
  journal.filter((e): e is OutputEntry => e.kind === "output").map((e) => e.text);

describe("replay, as a property over generated scripts", () => {
  it("gives a byte-identical journal every time, and the same from every prefix", async () => {
    await fc.assert(
      fc.asyncProperty(program, async (steps) => {
        const code = source(steps);
        const first = await execute(steps, code);
        const second = await execute(steps, code);
        expect(first.result.status).toBe("completed");
        const file = toJournalFile(first.result.journal);
        expect(toJournalFile(second.result.journal)).toBe(file);
        expect(first.published).toEqual(outputs(first.result.journal));

        // Resume from every prefix: a crash after any entry loses nothing and repeats nothing.
        const journal = first.result.journal;
        for (let length = 1; length <= journal.length; length++) {
          const prefix = journal.slice(0, length);
          const resumed = await execute(steps, code, prefix);
          expect(toJournalFile(resumed.result.journal), `resumed from ${length} entries`).toBe(
            file,
          );
          // Output already journaled is not shown again; the rest is shown exactly once.
          expect([...outputs(prefix), ...resumed.published]).toEqual(outputs(journal));
        }
      }),
      { numRuns: 60 },
    );
  });

  it("reports a changed script as a divergence at the first entry it changes, with both callsites", async () => {
    const mutation = fc.constantFrom("argument", "removed", "added");
    await fc.assert(
      fc.asyncProperty(program, fc.nat(), mutation, async (steps, pick, kind) => {
        const original = await execute(steps, source(steps));
        const target = steps[pick % steps.length]!;
        const line = target.k + STEP_LINE_OFFSET;
        const first = original.result.journal.find((e) => e.callsite?.startsWith(`p.ts:${line}:`));
        fc.pre(first !== undefined); // a step whose signal was already buffered emits nothing
        const changed = mutate(target, kind);
        fc.pre(changed !== undefined);

        const replay = await execute(
          steps,
          source(steps, { k: target.k, line: changed }),
          original.result.journal,
        );
        expect(replay.result.status).toBe("diverged");
        const report = replay.result.divergence!;
        expect(report.seq).toBe(first.seq);
        expect(report.matched).toBe(first.seq - 1);
        expect(report.recorded.callsite).toBe(first.callsite);
        if (report.replayed?.callsite !== undefined)
          expect(report.replayed.callsite).toMatch(/^p\.ts:\d+:\d+$/);
        if (kind !== "removed")
          expect(report.replayed?.callsite).toMatch(new RegExp(`^p\\.ts:${line}:`));
      }),
      { numRuns: 40 },
    );
  });
});

/** The same step with its first command changed, or gone, or preceded by a new call. */
function mutate(step: Step, kind: "argument" | "removed" | "added"): string | undefined {
  if (kind === "removed") return "";
  if (kind === "added") return `await tools.echo({ added: ${step.k} }); ${render(step)}`;
  switch (step.t) {
    case "call":
    case "catch":
    case "race":
    case "forget":
      return render(step).replace(`k: ${step.k}`, `k: ${step.k + 1000}`);
    case "all":
      return render(step).replace(
        `{ k: ${step.k}, i: 0 }`,
        `{ k: ${step.k}, i: 0, reordered: true }`,
      );
    case "chain":
      return render({ ...step, d1: step.d1 + 1 });
    case "interval":
      return render({ ...step, every: step.every + 1 });
    case "signal":
      return render({ ...step, timeout: step.timeout + 1 });
    case "random":
    case "date":
    case "log":
      return render(step).replace(`"${step.t[0]}${step.k}"`, `"x${step.k}"`);
  }
}

export type { InProcessResult };
