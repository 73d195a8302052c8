import { createCipheriv, randomBytes } from "node:crypto";
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
    const a = codec.seal('{"card":"4111"}', "acme");
    const b = codec.seal('{"card":"4111"}', "acme");
    expect(a).toMatch(/^rwc2:k1:[A-Za-z0-9_-]+$/);
    expect(a).not.toBe(b);
    expect(isSealed(a)).toBe(true);
    expect(isSealed('{"card":"4111"}')).toBe(false);
    expect(openText(a, codec, "acme")).toBe('{"card":"4111"}');
    expect(openText("[1,2]", undefined, "acme")).toBe("[1,2]");
  });

  it("refuses a value altered at rest", () => {
    const codec = codecFromKeys(`k1:${key()}`)!;
    const sealed = codec.seal('"x"', "acme");
    const flipped = sealed.slice(0, -2) + (sealed.at(-2) === "A" ? "B" : "A") + sealed.at(-1)!;
    expect(() => codec.open(flipped, "acme")).toThrow(/does not open with the key of that id/);
    expect(() => codec.open("rwc1:k1:AAAA", "acme")).toThrow(/truncated/);
  });

  it("binds a value to its namespace: moved to another namespace's row, it does not open", () => {
    const codec = codecFromKeys(`k1:${key()}`)!;
    const sealed = codec.seal('{"card":"4111"}', "tenant-a");
    expect(codec.open(sealed, "tenant-a")).toBe('{"card":"4111"}');
    expect(() => codec.open(sealed, "tenant-b")).toThrow(
      /as a value of namespace tenant-b: .*moved from another namespace's row/,
    );
  });

  it("still opens a value sealed before the binding (rwc1, a constant AAD)", () => {
    const bytes = randomBytes(32);
    const codec = codecFromKeys(`k1:${bytes.toString("base64")}`)!;
    // Sealed as the codec did before values were bound to their namespace.
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", bytes, iv);
    cipher.setAAD(Buffer.from("rewind payload codec v1"));
    const body = Buffer.concat([
      iv,
      cipher.update('"old"', "utf8"),
      cipher.final(),
      cipher.getAuthTag(),
    ]);
    const legacy = `rwc1:k1:${body.toString("base64url")}`;
    expect(isSealed(legacy)).toBe(true);
    expect(openText(legacy, codec, "any-namespace")).toBe('"old"');
  });
});
