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
  return write(value, "$", new Set());
}

function write(value: unknown, path: string, ancestors: Set<object>): string {
  switch (typeof value) {
    case "string":
    case "boolean":
      return JSON.stringify(value);
    case "number":
      if (!Number.isFinite(value)) throw notJson(path, String(value));
      return JSON.stringify(value);
    case "object": {
      if (value === null) return "null";
      if (ancestors.has(value)) throw notJson(path, "a circular reference");
      ancestors.add(value);
      try {
        if (Array.isArray(value)) {
          return `[${value.map((item, i) => write(item, `${path}[${i}]`, ancestors)).join(",")}]`;
        }
        const keys = Object.keys(value).sort(compareCodeUnits);
        const parts: string[] = [];
        for (const key of keys) {
          const item = (value as Record<string, unknown>)[key];
          if (item === undefined) continue; // as JSON.stringify: an undefined property is absent
          parts.push(`${JSON.stringify(key)}:${write(item, `${path}.${key}`, ancestors)}`);
        }
        return `{${parts.join(",")}}`;
      } finally {
        ancestors.delete(value);
      }
    }
    default:
      throw notJson(path, typeof value);
  }
}

/** Sorts by UTF-16 code units, as RFC 8785 requires (not by locale, not by code points). */
function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function notJson(path: string, what: string): TypeError {
  return new TypeError(`${path} is ${what}, which JSON cannot represent; pass plain data instead`);
}

/** Parses JSON text known to be canonical or at least valid JSON. */
export function parseJson(text: string): Json {
  return JSON.parse(text) as Json;
}

/** Canonicalises a value that is already known to be JSON (cheaper error paths are not needed). */
export function canonicalJson(value: Json): string {
  return canonicalize(value);
}
