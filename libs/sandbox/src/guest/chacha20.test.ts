import { describe, expect, it } from "vitest";
import { ChaCha20Stream } from "./chacha20.js";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
const range = (n: number) => Uint8Array.from({ length: n }, (_, i) => i);

describe("ChaCha20", () => {
  it("matches the RFC 8439 §2.3.2 block function test vector", () => {
    const nonce = Uint8Array.from([0, 0, 0, 9, 0, 0, 0, 0x4a, 0, 0, 0, 0]);
    const block = new ChaCha20Stream(range(32), nonce, 1).nextBlock();
    expect(hex(new Uint8Array(block.buffer))).toBe(
      "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e" +
        "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e",
    );
  });

  it("matches the RFC 8439 §2.4.2 encryption keystream (counter 1)", () => {
    const nonce = Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0x4a, 0, 0, 0, 0]);
    const stream = new ChaCha20Stream(range(32), nonce, 1);
    const plaintext = Buffer.from(
      "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.",
    );
    const keystream = new Uint8Array(plaintext.length);
    stream.fill(keystream);
    const cipher = plaintext.map((b, i) => b ^ keystream[i]!);
    expect(hex(cipher).slice(0, 64)).toBe(
      "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b",
    );
    expect(hex(cipher).slice(-36)).toBe("5af90bbf74a35be6b40b8eedf2785e42874d");
  });

  it("gives the same stream for the same key and a different one for another", () => {
    const a = new ChaCha20Stream(range(32));
    const b = new ChaCha20Stream(range(32));
    const c = new ChaCha20Stream(range(32).map((x) => x ^ 1));
    const take = (s: ChaCha20Stream) => Array.from({ length: 40 }, () => s.nextDouble());
    const fromA = take(a);
    expect(take(b)).toEqual(fromA);
    expect(take(c)).not.toEqual(fromA);
    for (const x of fromA) expect(x >= 0 && x < 1).toBe(true);
  });
});
