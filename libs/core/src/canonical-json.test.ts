import { describe, expect, it } from "vitest";
import { canonicalize } from "./canonical-json.js";
import { valueRef } from "./values.js";

describe("canonical JSON (RFC 8785)", () => {
  it("sorts keys by UTF-16 code units and writes no whitespace", () => {
    // RFC 8785 §3.2.3's sorting example: keys in code-unit order, not locale or code-point order.
    const value = {
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis",
    };
    // (Read the order off the text: Object.keys would list the integer-like key "1" first.)
    const keys = [...canonicalize(value).matchAll(/"((?:[^"\\]|\\.)*)":/g)].map(
      (m) => JSON.parse(`"${m[1]}"`) as string,
    );
    expect(keys).toEqual(["\r", "1", "\u0080", "\u00f6", "\u20ac", "\ud83d\ude00", "\ufb33"]);
    expect(canonicalize({ b: 1, a: [true, null] })).toBe('{"a":[true,null],"b":1}');
  });

  it("serialises numbers as ECMAScript does (RFC 8785 §3.2.2.3 samples)", () => {
    const samples: [number, string][] = [
      [0, "0"],
      [-0, "0"],
      [1e21, "1e+21"],
      [1e-7, "1e-7"],
      [333333333.33333329, "333333333.3333333"],
      [4.5, "4.5"],
      [2e-3, "0.002"],
      [0.000001, "0.000001"],
      [9007199254740992, "9007199254740992"],
      [-1.5e300, "-1.5e+300"],
    ];
    for (const [n, text] of samples) expect(canonicalize(n)).toBe(text);
  });

  it("matches the RFC's whole example", () => {
    const input = {
      numbers: [333333333.33333329, 1e30, 4.5, 2e-3, 0.000000000000000000000000001],
      string: '\u20ac$\u000f\nA\'B"\\\\"/',
      literals: [null, true, false],
    };
    expect(canonicalize(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it("gives equal values equal ids whatever their key order", () => {
    expect(valueRef({ a: 1, b: [1, { c: 2, d: 3 }] })).toBe(
      valueRef({ b: [1, { d: 3, c: 2 }], a: 1 }),
    );
    expect(valueRef({ a: 1 })).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(valueRef({ a: 1 })).not.toBe(valueRef({ a: 2 }));
  });

  it("refuses what JSON cannot represent, naming where it is", () => {
    expect(() => canonicalize({ a: [1, NaN] })).toThrow("$.a[1] is NaN");
    expect(() => canonicalize({ f: () => 1 })).toThrow("$.f is function");
    expect(() => canonicalize({ n: 1n })).toThrow("$.n is bigint");
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => canonicalize(cycle)).toThrow("$.self is a circular reference");
    expect(canonicalize({ a: undefined, b: 1 })).toBe('{"b":1}');
  });
});
