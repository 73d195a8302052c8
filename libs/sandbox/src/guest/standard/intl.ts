import { ObjectDefineProperty, ReflectApply } from "../intrinsics.js";
import { DEFAULT_LOCALE } from "../intl.js";
import { markNative, replaceMethod } from "./natives.js";
import { TIME_ZONE } from "./time.js";

/** Every Intl constructor a runtime may have (Node 24 adds DurationFormat). */
const INTL_CONSTRUCTORS = [
  "Collator",
  "DateTimeFormat",
  "DisplayNames",
  "DurationFormat",
  "ListFormat",
  "NumberFormat",
  "PluralRules",
  "RelativeTimeFormat",
  "Segmenter",
] as const;

const ObjectCreate = Object.create;

/**
 * `Intl` and the `toLocale*` methods default to the host's locale (its LANG) and time zone (TZ).
 * Both are pinned here, for every script of the epoch whatever the host's environment: the
 * locale to DEFAULT_LOCALE wherever a script leaves it out, the zone to UTC wherever a date
 * format leaves it out. The constructors are Proxies of the originals, so their `length`,
 * `prototype`, statics and `[native code]` are the built-ins' own.
 */
export function installIntl(): void {
  const intl = Intl as unknown as Record<string, unknown>;
  for (const name of INTL_CONSTRUCTORS) {
    const Original = intl[name] as (new (...args: unknown[]) => object) | undefined;
    if (typeof Original !== "function") continue;
    const withZone = name === "DateTimeFormat";
    const pinned = (args: unknown[]) => [
      args[0] === undefined ? DEFAULT_LOCALE : args[0],
      withZone ? zoned(args[1]) : args[1],
    ];
    const Pinned = new Proxy(Original, {
      apply(target, self, args) {
        return ReflectApply(target, self, pinned(args));
      },
      construct(target, args, newTarget) {
        return Reflect.construct(target, pinned(args), newTarget) as object;
      },
    });
    markNative(Pinned, name);
    ObjectDefineProperty(Original.prototype, "constructor", {
      value: Pinned,
      writable: true,
      configurable: true,
    });
    ObjectDefineProperty(Intl, name, { value: Pinned, writable: true, configurable: true });
  }
  // Non-standard, and it defaults to the host's locale; Node removes it from its contexts too.
  Reflect.deleteProperty(Intl, "v8BreakIterator");
  pin(Date.prototype, ["toLocaleString", "toLocaleDateString", "toLocaleTimeString"], true);
  pin(Number.prototype, ["toLocaleString"], false);
  pin(BigInt.prototype, ["toLocaleString"], false);
  pin(String.prototype, ["localeCompare", "toLocaleUpperCase", "toLocaleLowerCase"], false);
}

/**
 * Date format options with the sandbox's zone where they name none. The script's object is the
 * prototype of the one passed on, so its properties (and getters) are read as before.
 */
function zoned(options: unknown): unknown {
  if (options === undefined) return { timeZone: TIME_ZONE };
  if (typeof options !== "object" || options === null) return options;
  if ((options as { timeZone?: unknown }).timeZone !== undefined) return options;
  return ObjectCreate(options, {
    timeZone: { value: TIME_ZONE, enumerable: true },
  }) as unknown;
}

function pin(prototype: object, methods: readonly string[], withZone: boolean): void {
  for (const method of methods) {
    const original = (prototype as Record<string, unknown>)[method] as (
      ...args: unknown[]
    ) => unknown;
    // localeCompare takes the locale second: (that, locales, options).
    const localeIndex = method === "localeCompare" ? 1 : 0;
    replaceMethod(
      prototype,
      method,
      {
        pinned(this: unknown, ...args: unknown[]) {
          while (args.length <= localeIndex + 1) args.push(undefined);
          if (args[localeIndex] === undefined) args[localeIndex] = DEFAULT_LOCALE;
          if (withZone) args[localeIndex + 1] = zoned(args[localeIndex + 1]);
          return ReflectApply(original, this, args);
        },
      }.pinned,
    );
  }
}
