import { OriginalDate, ObjectDefineProperty } from "./intrinsics.js";
import { clock } from "./scheduler.js";

/**
 * `Date` on the logical clock: `new Date()` and `Date.now()` give the time of the last event the
 * run has seen, identically on replay. Everything else (`new Date(x)`, `Date.parse`, `Date.UTC`,
 * subclasses, `instanceof`) is the original Date's, which this wraps rather than reimplements.
 */
export function installTime(global: typeof globalThis): void {
  const LogicalDate = function Date(this: unknown, ...args: unknown[]) {
    if (new.target === undefined) return new OriginalDate(clock.now).toString();
    const params = args.length === 0 ? [clock.now] : args;
    return Reflect.construct(OriginalDate, params, new.target) as object;
  } as unknown as DateConstructor;
  Object.setPrototypeOf(LogicalDate, OriginalDate); // statics: parse, UTC
  ObjectDefineProperty(LogicalDate, "prototype", {
    value: OriginalDate.prototype,
    writable: false,
  });
  ObjectDefineProperty(LogicalDate, "length", { value: 7 });
  ObjectDefineProperty(LogicalDate, "now", {
    value: function now() {
      return clock.now;
    },
    writable: true,
    configurable: true,
  });
  ObjectDefineProperty(OriginalDate.prototype, "constructor", {
    value: LogicalDate,
    writable: true,
    configurable: true,
  });
  ObjectDefineProperty(global, "Date", { value: LogicalDate, writable: true, configurable: true });

  const performance = {
    /** Milliseconds since the run started, on the logical clock. */
    now: () => clock.now - clock.start,
    timeOrigin: clock.start,
  };
  ObjectDefineProperty(global, "performance", {
    value: performance,
    writable: true,
    configurable: true,
  });
}
