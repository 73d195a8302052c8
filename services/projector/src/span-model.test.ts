import { describe, expect, it } from "vitest";
import type { JournalEntry } from "@rewind/core";
import { traceIdOf } from "@rewind/telemetry";
import { spanIdOf, spansOf, type RunView } from "./span-model.js";

const journal: JournalEntry[] = [
  {
    seq: 1,
    kind: "run.started",
    at: 0,
    runId: "run_a",
    scriptHash: "sha256:s",
    input: {},
    seed: "00",
    epoch: 1,
    toolset: "shop",
    namespace: "default",
  },
  { seq: 2, kind: "call", at: 0, callsite: "order.ts:3:9", name: "charge", args: {}, callId: "c2" },
  { seq: 3, kind: "call.error", at: 0, callSeq: 2, error: { name: "Error", message: "declined" } },
  { seq: 4, kind: "timer.set", at: 0, callsite: "order.ts:4:3", due: 1_000 },
  { seq: 5, kind: "signal", at: 0, name: "go", payload: null },
  { seq: 6, kind: "timer.fired", at: 1_000, timerSeq: 4 },
  { seq: 7, kind: "output", at: 1_000, callsite: "order.ts:5:3", stream: "stdout", text: "hi" },
  { seq: 8, kind: "run.completed", at: 1_000, callsite: "order.ts:6:3", result: "ok" },
];
const view = (traceparent: string | null = null): RunView => ({
  journal,
  projected: {
    runId: "run_a",
    traceparent,
    committedUs: new Map(journal.map((e) => [e.seq, 1_700_000_000_000_000 + e.seq * 1_000])),
    activations: [
      {
        runId: "run_a",
        seq: 6,
        kind: "cold",
        replayed: 5,
        attempt: 1,
        scheduleToStartMs: 4,
        startedUs: 1_700_000_000_005_500,
        committedUs: 1_700_000_000_006_000,
      },
    ],
  },
});
const all = journal.map((e) => e.seq);

describe("the span model", () => {
  it("makes one span per call, timer, activation and run, from the journal alone", () => {
    const spans = spansOf(view(), all, view().projected.activations);
    expect(spans.map((s) => s.name)).toEqual([
      "run.started",
      "execute_tool charge",
      "timer",
      "activation cold",
      "run",
    ]);
    const [started, call, timer, activation, run] = spans;
    const traceId = traceIdOf("run_a");
    for (const span of spans) expect(span.traceId).toBe(traceId);
    expect(run!.spanId).toBe(spanIdOf("run_a", "run", 0));
    expect(run!.parentSpanId).toBeUndefined();
    for (const span of [started, call, timer, activation])
      expect(span!.parentSpanId).toBe(run!.spanId);
    expect(call).toMatchObject({
      startUs: 1_700_000_000_002_000,
      endUs: 1_700_000_000_003_000,
      status: "error",
      statusMessage: "declined",
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "charge",
        "gen_ai.tool.call.id": "c2",
        "code.file.path": "order.ts",
        "code.line.number": 3,
        "code.column.number": 9,
      },
    });
    expect(timer!.attributes["rewind.timer.outcome"]).toBe("fired");
    expect(activation!.attributes["rewind.activation.replayed"]).toBe(5);
    expect(run!.events.map((e) => e.name)).toEqual(["rewind.signal", "rewind.output"]);
    expect(run!.attributes["code.line.number"]).toBe(6);
  });

  it("is the same twice, and from a window as from the whole run", () => {
    const once = spansOf(view(), all, view().projected.activations);
    expect(JSON.stringify(spansOf(view(), all, view().projected.activations))).toBe(
      JSON.stringify(once),
    );
    const windowed = [
      ...spansOf(view(), [1, 2, 3], []),
      ...spansOf(view(), [4, 5, 6], view().projected.activations),
      ...spansOf(view(), [7, 8], []),
    ];
    expect(windowed.map((s) => s.spanId).sort()).toEqual(once.map((s) => s.spanId).sort());
  });

  it("takes the trace of the request that started the run, its span the run's parent", () => {
    const header = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const spans = spansOf(view(header), all, []);
    for (const span of spans) expect(span.traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(spans.at(-1)!.parentSpanId).toBe("b7ad6b7169203331");
  });

  it("puts no value of a namespace that seals its values into a span (docs/codec.md)", () => {
    const sealed = { ...view(), sealed: true };
    const spans = spansOf(sealed, all, []);
    const run = spans.at(-1)!;
    expect(run.attributes["rewind.run.result"]).toBe("(sealed)");
    const output = run.events.find((e) => e.name === "rewind.output")!;
    expect(output.attributes["rewind.output.text"]).toBe("(sealed)");
    expect(JSON.stringify(spans)).not.toContain('"hi"');
    // The same run, its namespace in the clear: the values are there.
    expect(spansOf(view(), all, []).at(-1)!.attributes["rewind.run.result"]).toBe('"ok"');
  });
});
