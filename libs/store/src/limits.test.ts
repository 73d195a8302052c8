import { describe, expect, it } from "vitest";
import { InFlightCounts } from "./limits.js";

describe("InFlightCounts", () => {
  const limits = { runsInFlight: 1_000, startsPerSecond: 100 };

  it("bounds a start by a count made here less than half a second before it was sent", () => {
    const counts = new InFlightCounts();
    expect(counts.bound("a", limits, 0)).toBeNull(); // never counted: this start counts
    counts.record("a", 10, 0);
    expect(counts.bound("a", limits, 499)).toBe(10);
    expect(counts.bound("a", limits, 500)).toBeNull(); // too old to bound by
    expect(counts.bound("b", limits, 100)).toBeNull(); // namespaces apart
    expect(counts.last("a")).toBe(10);
  });

  it("bounds by the count whatever the start rate allowed, unlike a bound by the limit", () => {
    const counts = new InFlightCounts();
    // Starts per second far above the open runs' limit (as the benchmarks raise it): the
    // statement still counts only when the count plus the last second's starts reach the limit.
    counts.record("a", 999, 0);
    expect(counts.bound("a", { runsInFlight: 1_000, startsPerSecond: 100_000 }, 1)).toBe(999);
  });

  it("never counts for a start with no limits", () => {
    expect(new InFlightCounts().bound("a", undefined, 0)).toBe(0);
  });
});
