import { describe, expect, it } from "vitest";
import { parseDuration } from "./duration.js";
import { shortForm } from "./short-form.js";

describe("durations", () => {
  it("reads milliseconds and unit strings", () => {
    expect(parseDuration(250)).toBe(250);
    expect(parseDuration("250ms")).toBe(250);
    expect(parseDuration("30s")).toBe(30_000);
    expect(parseDuration("1h30m")).toBe(5_400_000);
    expect(parseDuration("10d")).toBe(864_000_000);
    expect(parseDuration("1.5s")).toBe(1500);
  });

  it("says what a duration looks like when given something else", () => {
    expect(() => parseDuration("10 days")).toThrow(/use a number and a unit \(ms, s, m, h, d, w\)/);
    expect(() => parseDuration(-1, "sleep()'s duration")).toThrow(
      /sleep\(\)'s duration must be a finite number/,
    );
    expect(() => parseDuration("")).toThrow(/like "30s"/);
  });
});

describe("short forms for reports", () => {
  it("cuts long strings and collections and shows byte arrays by length", () => {
    expect(shortForm({ orderId: "A1", cents: 1200 })).toBe('{ orderId: "A1", cents: 1200 }');
    expect(shortForm("x".repeat(100))).toBe(`"${"x".repeat(40)}…"`);
    expect(
      shortForm(Object.fromEntries(Array.from({ length: 32 }, (_, i) => [String(i), i]))),
    ).toBe("<32 bytes>");
    expect(shortForm(Array.from({ length: 100 }, () => 7))).toBe("<100 bytes>");
    expect(shortForm([1, 2, 3, 4, 5, 6, 7, 8])).toBe("[1, 2, 3, 4, 5, 6, …2 more]");
    expect(shortForm({ a: { b: { c: { d: { e: 1 } } } } })).toBe("{ a: { b: { c: {…} } } }");
  });
});
