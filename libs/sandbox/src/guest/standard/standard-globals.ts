import { ObjectDefineProperty, ReflectApply } from "../intrinsics.js";
import { asBuiltin, replaceMethod } from "./natives.js";

/**
 * Math.E as the standard defines it. On Node 20, isolated-vm's contexts lack it (their snapshot
 * needs `--no-node-snapshot`, which no Rewind process passes): the runtime defines it with the
 * built-in's value and descriptor, so that epoch 2 computes the same with or without the flag.
 */
export function installMathE(): void {
  if (Reflect.getOwnPropertyDescriptor(Math, "E") !== undefined) return;
  ObjectDefineProperty(Math, "E", {
    value: 2.718281828459045,
    writable: false,
    enumerable: false,
    configurable: false,
  });
}

/** Math.random as a built-in method: not constructible, no `prototype`, `[native code]`. */
export function fixMathRandom(): void {
  const draw = Math.random;
  replaceMethod(
    Math,
    "random",
    {
      random() {
        return ReflectApply(draw, undefined, []);
      },
    }.random,
  );
}

/**
 * The timer globals with the names and lengths the HTML standard gives them (epoch 1's are
 * anonymous arrows, and clearTimeout and clearInterval are one function).
 */
const TIMERS: readonly [name: string, length: number][] = [
  ["setTimeout", 1],
  ["setInterval", 1],
  ["clearTimeout", 0],
  ["clearInterval", 0],
  ["queueMicrotask", 1],
];

export function nameTimers(global: typeof globalThis): void {
  const globals = global as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const [name, length] of TIMERS) {
    const impl = globals[name]!;
    const named = {
      timer(...args: unknown[]) {
        return ReflectApply(impl, undefined, args);
      },
    }.timer;
    ObjectDefineProperty(global, name, {
      value: asBuiltin(named, name, length),
      writable: true,
      configurable: true,
    });
  }
}
