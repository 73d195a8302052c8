import { ObjectDefineProperty, OriginalDate, ReflectApply } from "../intrinsics.js";
import { clock } from "../scheduler.js";
import { markNative, replaceMethod } from "./natives.js";

/** The one time zone inside the sandbox, whatever the host's TZ. */
export const TIME_ZONE = "UTC";
const ZONE_SUFFIX = "GMT+0000 (Coordinated Universal Time)";

const DatePrototype = OriginalDate.prototype;
const DateParse = OriginalDate.parse;
const DateUTC = OriginalDate.UTC;
const getTime = DatePrototype.getTime;
const toUTCString = DatePrototype.toUTCString;
const setUTCFullYear = DatePrototype.setUTCFullYear;
const getUTCFullYear = DatePrototype.getUTCFullYear;
const setTime = DatePrototype.setTime;
const MathTrunc = Math.trunc;
const RegExpExec = RegExp.prototype.exec;
const StringReplace = String.prototype.replace;

const timeOf = (date: unknown): number => ReflectApply(getTime, date, []);
const exec = (re: RegExp, text: string) => ReflectApply(RegExpExec, re, [text]) as string[] | null;

/**
 * `Date` on the logical clock, with local time pinned to UTC. `new Date()` and `Date.now()` give
 * the time of the last event the run has seen, identically on replay; everything that reads or
 * writes local time (the constructor's components, `getHours`, `setDate`, `toString`, a date-time
 * string with no zone) does so at UTC, so that nothing of the host's TZ or LANG reaches a script.
 *
 * `Date` itself is a Proxy of the original: its statics (`parse`, `UTC`), its prototype chain,
 * `name`, `length` and `[native code]` are the built-in's own, and `instanceof` and subclasses
 * work unchanged. Only the methods that depend on the zone are replaced.
 */
export function installTime(global: typeof globalThis): void {
  const LogicalDate = new Proxy(OriginalDate, {
    apply() {
      return dateString(clock.now);
    },
    construct(target, args, newTarget) {
      return Reflect.construct(target, [timeValueOf(args)], newTarget) as object;
    },
  });
  markNative(LogicalDate, "Date");
  ObjectDefineProperty(DatePrototype, "constructor", {
    value: LogicalDate,
    writable: true,
    configurable: true,
  });
  replaceMethod(
    OriginalDate,
    "now",
    {
      now() {
        return clock.now;
      },
    }.now,
  );
  replaceMethod(
    OriginalDate,
    "parse",
    {
      parse(text: unknown) {
        return parseAtUtc(String(text));
      },
    }.parse,
  );
  installLocalTimeAtUtc();
  ObjectDefineProperty(global, "Date", { value: LogicalDate, writable: true, configurable: true });

  const performance = {
    /** Milliseconds since the run started, on the logical clock. */
    now() {
      return clock.now - clock.start;
    },
    timeOrigin: clock.start,
  };
  replaceMethod(performance, "now", performance.now);
  ObjectDefineProperty(global, "performance", {
    value: performance,
    writable: true,
    configurable: true,
  });
}

/** The time value `new Date(...args)` means, with local time at UTC. */
function timeValueOf(args: unknown[]): number {
  if (args.length === 0) return clock.now;
  if (args.length >= 2) return ReflectApply(DateUTC, undefined, args) as number;
  const value = args[0];
  if (value instanceof OriginalDate) return timeOf(value);
  const primitive = toPrimitive(value);
  return typeof primitive === "string" ? parseAtUtc(primitive) : (primitive as number);
}

/** ToPrimitive(value) with no hint, as the Date constructor applies it (ECMA-262 7.1.1). */
function toPrimitive(value: unknown): unknown {
  if ((typeof value !== "object" || value === null) && typeof value !== "function") return value;
  const object = value as Record<PropertyKey, unknown>;
  const exotic = object[Symbol.toPrimitive];
  if (exotic !== undefined && exotic !== null) {
    if (typeof exotic !== "function") throw new TypeError("Symbol.toPrimitive is not a function");
    const result = ReflectApply(exotic, value, ["default"]);
    if ((typeof result === "object" && result !== null) || typeof result === "function")
      throw new TypeError("Cannot convert object to primitive value");
    return result;
  }
  for (const name of ["valueOf", "toString"]) {
    const method = object[name];
    if (typeof method === "function") {
      const result = ReflectApply(method, value, []);
      if ((typeof result !== "object" || result === null) && typeof result !== "function")
        return result;
    }
  }
  throw new TypeError("Cannot convert object to primitive value");
}

// The standard's date-time string format (ECMA-262 21.4.1.32): a time with no offset is local.
const ISO_FORMAT =
  /^[+-]?\d{4,6}(?:-\d\d(?:-\d\d)?)?(?:T\d\d:\d\d(?::\d\d(?:\.\d+)?)?(Z|[+-]\d\d:\d\d)?)?$/;
const HAS_TIME = /T/;
// A zone in the engine's legacy format: a zone name, or an offset after a time.
const LEGACY_ZONE =
  /(?:^|[^a-z])(?:z|ut|utc|gmt|est|edt|cst|cdt|mst|mdt|pst|pdt)(?:[^a-z]|$)|\d:\d\d(?::\d\d(?:\.\d+)?)?\s*(?:[ap]\.?m\.?)?\s*[+-]\s*\d/i;
const COMMENTS = /\([^)]*\)/g;

/** `Date.parse` with local time at UTC: a string that names no zone is read as UTC. */
function parseAtUtc(text: string): number {
  const parsed = DateParse(text);
  if (parsed !== parsed) return parsed; // NaN
  const iso = exec(ISO_FORMAT, text);
  if (iso !== null) {
    const local = iso[1] === undefined && exec(HAS_TIME, text) !== null;
    return local ? DateParse(`${text}Z`) : parsed;
  }
  const uncommented = ReflectApply(StringReplace, text, [COMMENTS, " "]) as string;
  if (exec(LEGACY_ZONE, uncommented) !== null) return parsed;
  const atUtc = DateParse(`${text} GMT`);
  return atUtc === atUtc ? atUtc : parsed;
}

/** "Mon Jan 01 2024" and "00:00:00" of a time value, from the engine's own UTC format. */
function parts(time: number): { day: string; time: string } | undefined {
  if (time !== time) return undefined;
  // "Mon, 01 Jan 2024 00:00:00 GMT"
  const text = ReflectApply(toUTCString, new OriginalDate(time), []);
  const match = exec(/^(\w+), (\d+) (\w+) (-?\d+) (\d\d:\d\d:\d\d) GMT$/, text)!;
  return { day: `${match[1]} ${match[3]} ${match[2]} ${match[4]}`, time: match[5]! };
}

function dateString(time: number): string {
  const p = parts(time);
  return p === undefined ? "Invalid Date" : `${p.day} ${p.time} ${ZONE_SUFFIX}`;
}

/** Local time is UTC: each local getter and setter is its UTC twin, the offset is 0. */
function installLocalTimeAtUtc(): void {
  const twins = [
    "FullYear",
    "Month",
    "Date",
    "Day",
    "Hours",
    "Minutes",
    "Seconds",
    "Milliseconds",
  ] as const;
  const proto = DatePrototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const unit of twins) {
    const get = proto[`getUTC${unit}`]!;
    replaceMethod(
      DatePrototype,
      `get${unit}`,
      {
        get(this: unknown) {
          return ReflectApply(get, this, []);
        },
      }.get,
    );
    if (unit === "Day") continue;
    const set = proto[`setUTC${unit}`]!;
    replaceMethod(
      DatePrototype,
      `set${unit}`,
      {
        set(this: unknown, ...args: unknown[]) {
          return ReflectApply(set, this, args);
        },
      }.set,
    );
  }
  replaceMethod(
    DatePrototype,
    "getTimezoneOffset",
    {
      getTimezoneOffset(this: unknown) {
        const time = timeOf(this);
        return time !== time ? NaN : 0;
      },
    }.getTimezoneOffset,
  );
  if ("getYear" in DatePrototype) {
    replaceMethod(
      DatePrototype,
      "getYear",
      {
        getYear(this: unknown) {
          return ReflectApply(getUTCFullYear, this, []) - 1900;
        },
      }.getYear,
    );
    // Annex B.2.3.2, with local time at UTC.
    replaceMethod(
      DatePrototype,
      "setYear",
      {
        setYear(this: unknown, year: unknown) {
          const time = timeOf(this);
          const y = Number(year);
          if (y !== y) return ReflectApply(setTime, this, [NaN]);
          const whole = MathTrunc(y);
          const full = whole >= 0 && whole <= 99 ? 1900 + whole : y;
          ReflectApply(setTime, this, [time !== time ? 0 : time]);
          return ReflectApply(setUTCFullYear, this, [full]);
        },
      }.setYear,
    );
  }
  replaceMethod(
    DatePrototype,
    "toString",
    {
      toString(this: unknown) {
        return dateString(timeOf(this));
      },
    }.toString,
  );
  replaceMethod(
    DatePrototype,
    "toDateString",
    {
      toDateString(this: unknown) {
        return parts(timeOf(this))?.day ?? "Invalid Date";
      },
    }.toDateString,
  );
  replaceMethod(
    DatePrototype,
    "toTimeString",
    {
      toTimeString(this: unknown) {
        const p = parts(timeOf(this));
        return p === undefined ? "Invalid Date" : `${p.time} ${ZONE_SUFFIX}`;
      },
    }.toTimeString,
  );
}
