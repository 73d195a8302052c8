import { describe, expect, it } from "vitest";
import { isoTime } from "../web/src/format.js";

describe("isoTime", () => {
  it("shows a logical time as an ISO date", () => {
    expect(isoTime(86_400_000)).toBe("1970-01-02T00:00:00.000Z");
    expect(isoTime(8.64e15)).toBe("+275760-09-13T00:00:00.000Z");
  });

  it("shows a timer due past the last date instead of failing the run page (issue 17)", () => {
    // An epoch-1 journal may hold setTimeout(f, 9e15)'s timer: toISOString threw on it.
    expect(isoTime(9e15)).toBe("9000000000000000 ms after 1970 (past the last date)");
    expect(isoTime(1e308)).toContain("1e+308 ms after 1970");
  });
});
