import { ObjectDefineProperty, StringFromCharCode } from "./intrinsics.js";

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/**
 * The encoding globals scripts expect and bare V8 lacks: TextEncoder / TextDecoder (UTF-8) and
 * atob / btoa. Pure computations, deterministic by nature.
 */
export function installEncoding(global: typeof globalThis): void {
  class TextEncoder {
    readonly encoding = "utf-8";
    encode(input = ""): Uint8Array {
      const text = String(input);
      const bytes: number[] = [];
      for (let i = 0; i < text.length; i++) {
        let c = text.charCodeAt(i);
        if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
          const next = text.charCodeAt(i + 1);
          if (next >= 0xdc00 && next <= 0xdfff) {
            c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
            i++;
          } else c = 0xfffd;
        } else if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
        if (c < 0x80) bytes.push(c);
        else if (c < 0x800) bytes.push(0xc0 | (c >> 6), 0x80 | (c & 63));
        else if (c < 0x10000) bytes.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
        else
          bytes.push(
            0xf0 | (c >> 18),
            0x80 | ((c >> 12) & 63),
            0x80 | ((c >> 6) & 63),
            0x80 | (c & 63),
          );
      }
      return Uint8Array.from(bytes);
    }
  }

  class TextDecoder {
    readonly encoding = "utf-8";
    constructor(label = "utf-8") {
      if (!/^utf-?8$/i.test(String(label)))
        throw new RangeError(`TextDecoder supports utf-8 only, got ${String(label)}`);
    }
    decode(input?: ArrayBuffer | ArrayBufferView): string {
      if (input === undefined) return "";
      const bytes = ArrayBuffer.isView(input)
        ? new Uint8Array(input.buffer, input.byteOffset, input.byteLength)
        : new Uint8Array(input);
      let out = "";
      for (let i = 0; i < bytes.length;) {
        const b = bytes[i++]!;
        let c = 0xfffd;
        const cont = (n: number) => {
          let v = 0;
          for (let k = 0; k < n; k++) {
            const x = bytes[i];
            if (x === undefined || (x & 0xc0) !== 0x80) return -1;
            v = (v << 6) | (x & 63);
            i++;
          }
          return v;
        };
        if (b < 0x80) c = b;
        else if (b >= 0xc2 && b < 0xe0) {
          const v = cont(1);
          if (v >= 0) c = ((b & 31) << 6) | v;
        } else if (b >= 0xe0 && b < 0xf0) {
          const v = cont(2);
          if (v >= 0) {
            const cp = ((b & 15) << 12) | v;
            c = cp >= 0x800 && (cp < 0xd800 || cp > 0xdfff) ? cp : 0xfffd;
          }
        } else if (b >= 0xf0 && b < 0xf5) {
          const v = cont(3);
          if (v >= 0) {
            const cp = ((b & 7) << 18) | v;
            c = cp >= 0x10000 && cp <= 0x10ffff ? cp : 0xfffd;
          }
        }
        out +=
          c > 0xffff
            ? StringFromCharCode(0xd800 + ((c - 0x10000) >> 10), 0xdc00 + ((c - 0x10000) & 1023))
            : StringFromCharCode(c);
      }
      return out;
    }
  }

  const btoa = (data: unknown): string => {
    const text = String(data);
    let out = "";
    for (let i = 0; i < text.length; i += 3) {
      const a = text.charCodeAt(i),
        b = text.charCodeAt(i + 1),
        c = text.charCodeAt(i + 2);
      if (a > 255 || b > 255 || c > 255)
        throw new RangeError(
          "btoa: the string has characters outside Latin-1; encode it with TextEncoder first",
        );
      const n = (a << 16) | ((b || 0) << 8) | (c || 0);
      out +=
        BASE64[n >> 18]! +
        BASE64[(n >> 12) & 63]! +
        (i + 1 < text.length ? BASE64[(n >> 6) & 63]! : "=") +
        (i + 2 < text.length ? BASE64[n & 63]! : "=");
    }
    return out;
  };
  const atob = (data: unknown): string => {
    const text = String(data)
      .replace(/[\t\n\f\r ]/g, "")
      .replace(/=+$/, "");
    if (text.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(text))
      throw new RangeError("atob: the string is not valid base64");
    let out = "";
    let bits = 0,
      value = 0;
    for (const ch of text) {
      value = (value << 6) | BASE64.indexOf(ch);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out += StringFromCharCode((value >> bits) & 255);
      }
    }
    return out;
  };
  for (const [name, value] of Object.entries({ TextEncoder, TextDecoder, btoa, atob })) {
    ObjectDefineProperty(global, name, { value, writable: true, configurable: true });
  }
}
