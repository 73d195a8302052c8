import { describe, expect, it } from "vitest";
import { InFlightCounts } from "./limits.js";

describe("InFlightCounts", () => {
  const limits = { runsInFlight: 1_000, startsPerSecond: 100 };

  it("counts the first start of a namespace, and every start with no count this second", () => {
    const counts = new InFlightCounts();
    expect(counts.mustCount("a", limits, 0)).toBe(true);
    counts.record("a", 10, 0);
    expect(counts.mustCount("a", limits, 999)).toBe(false);
    expect(counts.mustCount("a", limits, 1_000)).toBe(true);
    expect(counts.mustCount("b", limits, 500)).toBe(true); // namespaces apart
    expect(counts.last("a")).toBe(10);
  });

  it("counts every start while a second's starts could reach the limit", () => {
    const counts = new InFlightCounts();
    counts.record("a", 799, 0);
    expect(counts.mustCount("a", limits, 1)).toBe(false); // 799 + 2 × 100 < 1,000
    counts.record("a", 800, 0);
    expect(counts.mustCount("a", limits, 1)).toBe(true);
  });

  it("never counts for a start with no limits", () => {
    expect(new InFlightCounts().mustCount("a", undefined, 0)).toBe(false);
  });
});
