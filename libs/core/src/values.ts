import { createHash } from "node:crypto";
import { canonicalize } from "./canonical-json.js";

/** A content address: `sha256:` and the hex SHA-256 of the value's canonical JSON. */
export type ValueRef = `sha256:${string}`;

export function valueRefOfCanonical(canonical: string): ValueRef {
  return `sha256:${createHash("sha256").update(canonical).digest("hex")}`;
}

export function valueRef(value: unknown): ValueRef {
  return valueRefOfCanonical(canonicalize(value));
}

/** UTF-8 length of a string without allocating a buffer for it. */
export function utf8Length(text: string): number {
  return Buffer.byteLength(text, "utf8");
}
