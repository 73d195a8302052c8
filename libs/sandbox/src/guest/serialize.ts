import { JsonStringify } from "./intrinsics.js";

/** Guest-side limits, set by the host at start. */
export const limits = { maxValueBytes: 4 * 1024 * 1024 };

/**
 * Serialises a value crossing the wall, with JSON.stringify's familiar rules (undefined properties
 * dropped, a top-level undefined becomes null) and the size limit checked where the script can
 * still catch the error. The host checks again: it trusts nothing that leaves the sandbox.
 */
export function toWire(value: unknown, what: string): string {
  let text: string | undefined;
  try {
    text = JsonStringify(value);
  } catch (error) {
    throw new TypeError(`${what} cannot be sent out of the script as JSON: ${messageOf(error)}`);
  }
  if (text === undefined) text = "null";
  // A UTF-16 length is at most the UTF-8 length; count bytes only when it could matter.
  if (text.length * 3 > limits.maxValueBytes) {
    const bytes = utf8Length(text);
    if (bytes > limits.maxValueBytes) {
      const error = new RangeError(
        `${what} is ${bytes} bytes of JSON, over the limit of ${limits.maxValueBytes} bytes: ` +
          `pass a smaller value (store large data outside the run and pass a reference)`,
      );
      (error as RangeError & { code?: string }).code = "PAYLOAD_TOO_LARGE";
      throw error;
    }
  }
  return text;
}

export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

export function messageOf(error: unknown): string {
  if (error !== null && typeof error === "object" && "message" in error) {
    return String(error.message);
  }
  return String(error);
}
