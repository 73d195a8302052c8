import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { codecFromKeys, isSealed, openText } from "./codec.js";

const key = () => randomBytes(32).toString("base64");

describe("payload codec keys (REWIND_CODEC_KEYS)", () => {
  it("takes id:base64key pairs, the first sealing", () => {
    const codec = codecFromKeys(` new:${key()}, old:${key()} `)!;
    expect(codec.encryptingKeyId).toBe("new");
    expect(codec.keyIds).toEqual(["new", "old"]);
    expect(codecFromKeys(undefined)).toBeUndefined();
    expect(codecFromKeys("  ")).toBeUndefined();
  });

  it.each([
    ["nocolon", /is not id:base64key/],
    [`:${key()}`, /is not id:base64key/],
    ["k1:c2hvcnQ=", /the key "k1" is 5 bytes, not 32 in base64/],
    [`k1:${key()},k1:${key()}`, /the key id "k1" is listed twice/],
    [`k 1:${key()}`, /is not id:base64key/],
  ])("refuses %s, naming the variable", (text, message) => {
    expect(() => codecFromKeys(text)).toThrow(/REWIND_CODEC_KEYS is malformed/);
    expect(() => codecFromKeys(text)).toThrow(message);
  });

  it("seals to text that is never canonical JSON, a new IV each time", () => {
    const codec = codecFromKeys(`k1:${key()}`)!;
    const a = codec.seal('{"card":"4111"}');
    const b = codec.seal('{"card":"4111"}');
    expect(a).toMatch(/^rwc1:k1:[A-Za-z0-9_-]+$/);
    expect(a).not.toBe(b);
    expect(isSealed(a)).toBe(true);
    expect(isSealed('{"card":"4111"}')).toBe(false);
    expect(openText(a, codec)).toBe('{"card":"4111"}');
    expect(openText("[1,2]", undefined)).toBe("[1,2]");
  });

  it("refuses a value altered at rest", () => {
    const codec = codecFromKeys(`k1:${key()}`)!;
    const sealed = codec.seal('"x"');
    const flipped = sealed.slice(0, -2) + (sealed.at(-2) === "A" ? "B" : "A") + sealed.at(-1)!;
    expect(() => codec.open(flipped)).toThrow(/does not open with the key of that id/);
    expect(() => codec.open("rwc1:k1:AAAA")).toThrow(/truncated/);
  });
});
