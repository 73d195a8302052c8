import { ChaCha20Stream } from "./chacha20.js";
import { ObjectDefineProperty } from "./intrinsics.js";

const HEX = "0123456789abcdef";

/**
 * `Math.random`, `crypto.getRandomValues` and `crypto.randomUUID` drawn from one ChaCha20 stream
 * keyed by the run's seed: the same draws in the same order on every replay.
 */
export function installRandom(global: typeof globalThis, seedHex: string): void {
  const key = new Uint8Array(32);
  for (let i = 0; i < 32; i++) key[i] = parseInt(seedHex.slice(i * 2, i * 2 + 2), 16);
  const stream = new ChaCha20Stream(key);

  ObjectDefineProperty(Math, "random", {
    value: function random() {
      return stream.nextDouble();
    },
    writable: true,
    configurable: true,
  });

  const crypto = {
    getRandomValues<T extends ArrayBufferView | null>(array: T): T {
      if (
        !ArrayBuffer.isView(array) ||
        array instanceof Float32Array ||
        array instanceof Float64Array
      ) {
        throw new TypeError("crypto.getRandomValues expects an integer typed array");
      }
      if (array.byteLength > 65536) {
        throw new RangeError(
          `crypto.getRandomValues can fill at most 65536 bytes at once, got ${array.byteLength}`,
        );
      }
      stream.fill(new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
      return array;
    },
    randomUUID(): string {
      const bytes = new Uint8Array(16);
      stream.fill(bytes);
      bytes[6] = (bytes[6]! & 0x0f) | 0x40; // version 4
      bytes[8] = (bytes[8]! & 0x3f) | 0x80; // variant 10
      let text = "";
      for (let i = 0; i < 16; i++) {
        if (i === 4 || i === 6 || i === 8 || i === 10) text += "-";
        text += HEX[bytes[i]! >> 4]! + HEX[bytes[i]! & 15]!;
      }
      return text;
    },
  };
  ObjectDefineProperty(global, "crypto", { value: crypto, writable: true, configurable: true });
}
