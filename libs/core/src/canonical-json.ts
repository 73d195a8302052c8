import type { Json } from "./json.js";

/**
 * Canonical JSON (RFC 8785, JCS): object keys sorted by UTF-16 code units, no whitespace,
 * numbers and strings serialised as ECMAScript's JSON.stringify does. Two equal values have the
 * same canonical text, so the text (or its hash) identifies the value.
 *
 * Throws a TypeError naming the path of anything JSON cannot represent (undefined, functions,
 * NaN, Infinity, bigint, cycles) instead of silently dropping it as JSON.stringify would.
 */
export function canonicalize(value: unknown): string {
  try {
    return write(value, []);
  } catch (error) {
    if (error instanceof NotJson) {
      throw new TypeError(
        `$${error.path.reverse().join("")} is ${error.what}, which JSON cannot represent; pass plain data instead`,
      );
    }
    throw error;
  }
}

/** Thrown while writing; the path is collected as the stack unwinds (nothing built on success). */
class NotJson extends Error {
  readonly path: string[] = [];
  constructor(readonly what: string) {
    super(what);
  }
}

function write(value: unknown, ancestors: object[]): string {
  switch (typeof value) {
    case "string":
    case "boolean":
      return JSON.stringify(value);
    case "number":
      if (!Number.isFinite(value)) throw new NotJson(String(value));
      return JSON.stringify(value);
    case "object": {
      if (value === null) return "null";
      if (ancestors.includes(value)) throw new NotJson("a circular reference");
      ancestors.push(value);
      try {
        return Array.isArray(value)
          ? writeArray(value, ancestors)
          : writeObject(value as Record<string, unknown>, ancestors);
      } finally {
        ancestors.pop();
      }
    }
    default:
      throw new NotJson(typeof value);
  }
}

function writeArray(items: readonly unknown[], ancestors: object[]): string {
  let text = "[";
  for (let i = 0; i < items.length; i++) {
    try {
      text += (i === 0 ? "" : ",") + write(items[i], ancestors);
    } catch (error) {
      if (error instanceof NotJson) error.path.push(`[${i}]`);
      throw error;
    }
  }
  return `${text}]`;
}

function writeObject(record: Record<string, unknown>, ancestors: object[]): string {
  // Default sort compares UTF-16 code units, as RFC 8785 requires (not locale, not code points).
  const keys = Object.keys(record).sort();
  let text = "{";
  let first = true;
  for (const key of keys) {
    const item = record[key];
    if (item === undefined) continue; // as JSON.stringify: an undefined property is absent
    try {
      text += `${first ? "" : ","}${JSON.stringify(key)}:${write(item, ancestors)}`;
    } catch (error) {
      if (error instanceof NotJson) error.path.push(`.${key}`);
      throw error;
    }
    first = false;
  }
  return `${text}}`;
}

/** Parses JSON text known to be canonical or at least valid JSON. */
export function parseJson(text: string): Json {
  return JSON.parse(text) as Json;
}

/**
 * The value with its object keys in canonical order. Every value Rewind journals is in this form,
 * so a script sees the same key order live, on replay, and from any store (jsonb keeps no order).
 */
export function inCanonicalOrder(value: unknown): Json {
  return JSON.parse(canonicalize(value)) as Json;
}
