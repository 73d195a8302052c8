import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { orderEntry, type JournalEntry } from "./entries.js";

const KNOWN = ["name", "args", "callId", "callSeq", "result", "error", "due", "timerSeq", "by"];

/** orderEntry as it was before it remembered shapes: every entry's keys sorted anew. */
function sortedAnew(source: Record<string, unknown>): Record<string, unknown> {
  const ordered: Record<string, unknown> = { seq: source.seq, kind: source.kind, at: source.at };
  if (source.callsite !== undefined) ordered.callsite = source.callsite;
  const rank = (k: string) => (KNOWN.includes(k) ? KNOWN.indexOf(k) : 99);
  const rest = Object.keys(source).filter((k) => !(k in ordered) && k !== "callsite");
  rest.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : 1));
  for (const key of rest) if (source[key] !== undefined) ordered[key] = source[key];
  return ordered;
}

describe("orderEntry", () => {
  it("puts seq, kind, at and callsite first, then the kind's fields in their fixed order", () => {
    const entry = { result: 3, at: 5, callSeq: 2, kind: "call.result", seq: 4 };
    expect(JSON.stringify(orderEntry(entry as unknown as JournalEntry))).toBe(
      '{"seq":4,"kind":"call.result","at":5,"callSeq":2,"result":3}',
    );
  });

  it("orders every shape as a fresh sort would, whatever its keys hold (commas included)", () => {
    const key = fc.oneof(fc.constantFrom(...KNOWN, "callsite", "zeta", "a,b", "a"), fc.string());
    const source = fc.dictionary(key, fc.oneof(fc.integer(), fc.constant(undefined)), {
      maxKeys: 8,
    });
    fc.assert(
      fc.property(source, source, (first, second) => {
        // Two shapes in a row: a remembered order must not leak into another shape.
        for (const fields of [first, second]) {
          const entry = { seq: 1, kind: "call", at: 0, ...fields };
          const ordered = orderEntry(entry as unknown as JournalEntry);
          const expected = sortedAnew(entry);
          expect(JSON.stringify(ordered)).toBe(JSON.stringify(expected));
          expect(Object.keys(ordered)).toEqual(Object.keys(expected));
        }
      }),
      { numRuns: 500 },
    );
  });
});
