import { ObjectDefineProperty, ReflectApply } from "./intrinsics.js";

/** The locale a script gets when it names none: fixed, so output does not depend on a host's LANG. */
export const DEFAULT_LOCALE = "en-US";

const INTL_CONSTRUCTORS = [
  "Collator",
  "DateTimeFormat",
  "DisplayNames",
  "ListFormat",
  "NumberFormat",
  "PluralRules",
  "RelativeTimeFormat",
  "Segmenter",
] as const;

/**
 * `Intl` and the `toLocale*` methods default to the host's locale (its LANG) and time zone. Both
 * are pinned: the time zone by the host (TZ=UTC for the whole process), the locale here, by
 * supplying DEFAULT_LOCALE wherever a script leaves the locale out.
 */
export function installIntl(): void {
  const intl = Intl as unknown as Record<string, unknown>;
  for (const name of INTL_CONSTRUCTORS) {
    const Original = intl[name] as (new (...args: unknown[]) => object) | undefined;
    if (typeof Original !== "function") continue;
    const Pinned = function (this: unknown, locales?: unknown, options?: unknown) {
      return Reflect.construct(
        Original,
        [locales ?? DEFAULT_LOCALE, options],
        new.target ?? Pinned,
      ) as object;
    };
    Object.setPrototypeOf(Pinned, Original); // supportedLocalesOf
    ObjectDefineProperty(Pinned, "prototype", { value: Original.prototype });
    ObjectDefineProperty(Pinned, "name", { value: name });
    ObjectDefineProperty(Original.prototype, "constructor", {
      value: Pinned,
      writable: true,
      configurable: true,
    });
    ObjectDefineProperty(Intl, name, { value: Pinned, writable: true, configurable: true });
  }
  pin(Date.prototype, ["toLocaleString", "toLocaleDateString", "toLocaleTimeString"]);
  pin(Number.prototype, ["toLocaleString"]);
  pin(BigInt.prototype, ["toLocaleString"]);
  pin(String.prototype, ["localeCompare", "toLocaleUpperCase", "toLocaleLowerCase"]);
}

function pin(prototype: object, methods: readonly string[]): void {
  for (const method of methods) {
    const original = (prototype as Record<string, unknown>)[method] as (
      ...args: unknown[]
    ) => unknown;
    // localeCompare takes the locale second: (that, locales, options).
    const localeIndex = method === "localeCompare" ? 1 : 0;
    const pinned = {
      [method](this: unknown, ...args: unknown[]) {
        if (args[localeIndex] === undefined) {
          while (args.length < localeIndex) args.push(undefined);
          args[localeIndex] = DEFAULT_LOCALE;
        }
        return ReflectApply(original, this, args);
      },
    }[method]!;
    ObjectDefineProperty(prototype, method, { value: pinned, writable: true, configurable: true });
  }
}
