import { ObjectDefineProperty, ObjectKeys, OriginalDate, OriginalError } from "./intrinsics.js";
import { output } from "./scheduler.js";

/**
 * `console.*` as journaled output: log/info/debug to stdout, warn/error to stderr, formatted
 * close to Node's util.format so scripts print what their authors expect. Output is a command:
 * replay recomputes it and compares it byte for byte.
 */
export function installConsole(global: typeof globalThis): void {
  const out = (stream: "stdout" | "stderr") =>
    function (...args: unknown[]) {
      output(stream, `${format(args)}\n`);
    };
  const log = out("stdout");
  const error = out("stderr");
  const console = {
    log,
    info: log,
    debug: log,
    trace: log,
    warn: error,
    error,
    dir: (value: unknown) => output("stdout", `${inspect(value, 0, [])}\n`),
    table: log,
    assert: (condition: unknown, ...args: unknown[]) => {
      if (!condition) error("Assertion failed", ...args);
    },
  };
  ObjectDefineProperty(global, "console", { value: console, writable: true, configurable: true });
}

export function format(args: readonly unknown[]): string {
  let first = 0;
  let text = "";
  const head = args[0];
  if (typeof head === "string" && head.includes("%") && args.length > 1) {
    first = 1;
    text = head.replace(/%([sdifjoOc%])/g, (match, spec: string) => {
      if (spec === "%") return "%";
      if (first >= args.length) return match;
      const arg = args[first++];
      switch (spec) {
        case "s":
          return typeof arg === "string" ? arg : inspect(arg, 1, []);
        case "d":
        case "i": {
          const n = typeof arg === "bigint" ? arg : Number(arg);
          return spec === "i" && typeof n === "number" ? String(Math.trunc(n)) : String(n);
        }
        case "f":
          return String(Number(arg));
        case "j":
          try {
            return JSON.stringify(arg) ?? "undefined";
          } catch {
            return "[Circular]";
          }
        case "c":
          return "";
        default:
          return inspect(arg, 0, []);
      }
    });
  }
  for (let i = first; i < args.length; i++) {
    const arg = args[i];
    const piece = typeof arg === "string" ? arg : inspect(arg, 0, []);
    text = i === 0 ? piece : `${text} ${piece}`;
  }
  return text;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

export function inspect(value: unknown, depth: number, seen: object[]): string {
  switch (typeof value) {
    case "string":
      return depth === 0 ? value : `'${value.replace(/'/g, "\\'")}'`;
    case "number":
      return Object.is(value, -0) ? "-0" : String(value);
    case "bigint":
      return `${value}n`;
    case "undefined":
      return "undefined";
    case "boolean":
      return String(value);
    case "symbol":
      return value.toString();
    case "function":
      return /^class\b/.test(Function.prototype.toString.call(value))
        ? `[class ${value.name || "(anonymous)"}]`
        : `[Function: ${value.name || "(anonymous)"}]`;
    case "object":
      break;
  }
  if (value === null) return "null";
  const object = value;
  if (object instanceof OriginalError) return object.stack ?? `${object.name}: ${object.message}`;
  if (object instanceof OriginalDate) {
    return Number.isNaN(object.getTime()) ? "Invalid Date" : object.toISOString();
  }
  if (seen.includes(object)) return "[Circular]";
  if (depth > 2) return Array.isArray(object) ? "[Array]" : "[Object]";
  seen.push(object);
  try {
    if (Array.isArray(object)) {
      const items = object.map((item) => inspect(item, depth + 1, seen));
      return items.length === 0 ? "[]" : `[ ${items.join(", ")} ]`;
    }
    if (object instanceof Map) {
      const items = [...object].map(
        ([k, v]) => `${inspect(k, depth + 1, seen)} => ${inspect(v, depth + 1, seen)}`,
      );
      return `Map(${object.size}) {${items.length ? ` ${items.join(", ")} ` : ""}}`;
    }
    if (object instanceof Set) {
      const items = [...object].map((item) => inspect(item, depth + 1, seen));
      return `Set(${object.size}) {${items.length ? ` ${items.join(", ")} ` : ""}}`;
    }
    const items = ObjectKeys(object).map((key) => {
      const label = IDENTIFIER.test(key) ? key : `'${key}'`;
      return `${label}: ${inspect((object as Record<string, unknown>)[key], depth + 1, seen)}`;
    });
    return items.length === 0 ? "{}" : `{ ${items.join(", ")} }`;
  } finally {
    seen.pop();
  }
}
