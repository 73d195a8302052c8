import type { Json } from "./api.js";

/** A value as a person reads it: JSON, indented, or its string as it is. */
export function showValue(value: Json | undefined): string {
  if (value === undefined) return "(none)";
  if (typeof value === "string") return JSON.stringify(value);
  try {
    return JSON.stringify(value, null, 2) ?? "(not JSON)";
  } catch {
    return "(not JSON)";
  }
}

/** A value on one line, cut to `max` characters. */
export function briefValue(value: Json | undefined, max = 80): string {
  const text = value === undefined ? "" : (JSON.stringify(value) ?? "");
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A span of logical time: "0 ms", "1.2 s", "3 d 4 h". */
export function duration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  if (ms < 3_600_000)
    return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1_000)} s`;
  if (ms < 86_400_000)
    return `${Math.floor(ms / 3_600_000)} h ${Math.round((ms % 3_600_000) / 60_000)} min`;
  return `${Math.floor(ms / 86_400_000)} d ${Math.round((ms % 86_400_000) / 3_600_000)} h`;
}

/**
 * A logical time (ms since 1970) as an ISO date; a timer in an epoch-1 journal may be due past the
 * last date there is (setTimeout(f, 9e15)), which has no date to show and must not stop the page.
 */
export function isoTime(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime())
    ? `${ms} ms after 1970 (past the last date)`
    : date.toISOString();
}

export function localTime(iso: string | number | undefined): string {
  if (iso === undefined) return "";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso) : date.toLocaleString();
}

/** `order.ts:5:30` as file and line, or undefined for no callsite. */
export function lineOf(callsite: string | undefined): { file: string; line: number } | undefined {
  const match = callsite === undefined ? null : /^(.*):(\d+):(\d+)$/.exec(callsite);
  return match === null ? undefined : { file: match[1]!, line: Number(match[2]) };
}

/** Each `file:line:column` of a source-mapped stack, in order ("at price (lib/price.ts:2:27)"). */
export function stackFrames(stack: string | undefined): string[] {
  if (stack === undefined) return [];
  return [...stack.matchAll(/\(([^()\s]+:\d+:\d+)\)|at ([^()\s]+:\d+:\d+)/g)].map(
    (match) => (match[1] ?? match[2])!,
  );
}

/** A text field of a submitted form ("" when absent). */
export function field(data: FormData, name: string): string {
  const value = data.get(name);
  return typeof value === "string" ? value : "";
}
