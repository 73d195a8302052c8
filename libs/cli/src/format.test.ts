import { describe, expect, it } from "vitest";
import { entrySummary } from "./format.js";

describe("entrySummary", () => {
  it("shows a timer's due date", () => {
    expect(entrySummary({ seq: 2, kind: "timer.set", at: 0, due: 86_400_000 })).toBe(
      "due 1970-01-02T00:00:00.000Z",
    );
  });

  it("shows a due time past the last date instead of failing (issue 17: setTimeout(f, 9e15))", () => {
    // Epoch-1 journals may hold these: `rewind runs show` failed on them with "Invalid time value".
    expect(entrySummary({ seq: 2, kind: "timer.set", at: 0, due: 9e15 + 1.8e12 })).toBe(
      "due 9001800000000000 ms after 1970 (past the last date)",
    );
    expect(entrySummary({ seq: 2, kind: "timer.set", at: 0, due: 1e308 })).toContain("1e+308 ms");
  });

  it("says how many tries a call's outcome took when its tool retried", () => {
    expect(entrySummary({ seq: 3, kind: "call.result", at: 0, callSeq: 2, result: 1 })).toBe(
      "seq 2 → 1",
    );
    expect(
      entrySummary({ seq: 3, kind: "call.result", at: 0, callSeq: 2, result: 1, attempts: 3 }),
    ).toBe("seq 2 → 1 (3 attempts)");
    expect(
      entrySummary({
        seq: 3,
        kind: "call.error",
        at: 0,
        callSeq: 2,
        error: { name: "Error", message: "down" },
        attempts: 4,
      }),
    ).toBe("seq 2 ✗ down (4 attempts)");
  });
});
