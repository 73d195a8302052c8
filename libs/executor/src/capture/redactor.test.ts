import { describe, expect, it } from "vitest";
import type { JournalEntry } from "@rewind/core";
import { PATTERN_TIMEOUT_RULE } from "./bounded-patterns.js";
import { luhn } from "./detectors.js";
import { Redactor } from "./redactor.js";

const none = { fields: [], detectors: [], patterns: [] };

describe("Redactor", () => {
  it("replaces the fields a JSON path names, at any depth with ..", () => {
    const r = Redactor.of([
      { ...none, fields: ["$.card.number", "$..password", "$.items[*].cvv"] },
    ])!;
    const { value, rules } = r.value({
      card: { number: "4242424242424242", exp: "12/30" },
      user: { login: "ann", password: "hunter2", nested: [{ password: "x" }] },
      items: [{ cvv: "123" }, { cvv: "456", n: 1 }],
    });
    expect(value).toEqual({
      card: { number: { $redacted: "$.card.number" }, exp: "12/30" },
      user: {
        login: "ann",
        password: { $redacted: "$..password" },
        nested: [{ password: { $redacted: "$..password" } }],
      },
      items: [
        { cvv: { $redacted: "$.items[*].cvv" } },
        { cvv: { $redacted: "$.items[*].cvv" }, n: 1 },
      ],
    });
    expect(rules.sort()).toEqual(["$..password", "$.card.number", "$.items[*].cvv"]);
  });

  it("finds Luhn-valid card numbers and bearer tokens inside strings, not look-alikes", () => {
    const r = Redactor.of([{ ...none, detectors: ["card-number", "bearer-token"] }])!;
    expect(luhn("4242 4242 4242 4242")).toBe(true);
    expect(luhn("4242 4242 4242 4241")).toBe(false);
    const { value, rules } = r.value({
      note: "card 4242 4242 4242 4242, order 4242424242424241",
      headers: { authorization: "Bearer abcdEFGH1234.xyz" },
    });
    expect(value).toEqual({
      note: "card [redacted:card-number], order 4242424242424241",
      headers: { authorization: "[redacted:bearer-token]" },
    });
    expect(rules).toEqual(["bearer-token", "card-number"]);
  });

  it("marks the entries it changed, redacts output and error messages, leaves others as they are", () => {
    const r = Redactor.of([{ ...none, detectors: ["email"] }])!;
    const entries: JournalEntry[] = [
      { seq: 2, kind: "output", at: 0, stream: "stdout", text: "mail ann@example.com\n" },
      {
        seq: 3,
        kind: "call.error",
        at: 0,
        callSeq: 1,
        error: { name: "E", message: "no ann@example.com" },
      },
      { seq: 4, kind: "timer.set", at: 0, due: 5 },
      { seq: 5, kind: "call", at: 0, name: "x", args: { to: "bob" }, callId: "c" },
    ];
    const out = r.entries(entries);
    expect(out[0]).toMatchObject({ text: "mail [redacted:email]\n", redacted: ["email"] });
    expect(out[1]).toMatchObject({
      error: { message: "no [redacted:email]" },
      redacted: ["email"],
    });
    expect(out[2]).toBe(entries[2]);
    expect(out[3]).toBe(entries[3]);
    expect(entries[0]).toMatchObject({ text: "mail ann@example.com\n" }); // the live copy is untouched
  });

  it("runs an operator's pattern, and fails closed when a hostile one runs out of time", () => {
    const ssn = Redactor.of([
      { ...none, patterns: [{ name: "ssn", regex: "\\d{3}-\\d{2}-\\d{4}" }] },
    ])!;
    expect(ssn.value({ s: "id 123-45-6789." })).toEqual({
      value: { s: "id [redacted:ssn]." },
      rules: ["ssn"],
    });
    const hostile = Redactor.of([{ ...none, patterns: [{ name: "evil", regex: "(a+)+$" }] }])!;
    const started = performance.now();
    const { value, rules } = hostile.value({ s: `${"a".repeat(40)}b`, t: "fine" });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(value).toEqual({
      s: `[redacted:${PATTERN_TIMEOUT_RULE}]`,
      t: `[redacted:${PATTERN_TIMEOUT_RULE}]`,
    });
    expect(rules).toEqual([PATTERN_TIMEOUT_RULE]);
  });

  it("is undefined for empty rules", () => {
    expect(Redactor.of([none])).toBeUndefined();
  });
});
