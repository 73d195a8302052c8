import { ObjectDefineProperty, ReflectApply } from "../intrinsics.js";

/**
 * The functions the runtime puts in place of built-ins must look like built-ins: a library that
 * checks `Function.prototype.toString(fn)` for `[native code]`, or a constructor's name, must see
 * what it sees in any JavaScript engine. Each replacement is registered here with the text a
 * native function of its name prints, and `Function.prototype.toString` answers that text.
 */
const nativeText = new WeakMap<object, string>();
const FunctionToString = Function.prototype.toString;

/** Registers `fn` as native, under `name` (the name it prints, not necessarily its `name`). */
export function markNative<T extends object>(fn: T, name: string): T {
  nativeText.set(fn, `function ${name}() { [native code] }`);
  return fn;
}

/**
 * Gives `fn` the `name` and `length` a built-in of that name has (both non-writable,
 * non-enumerable, configurable, as the standard says) and registers it as native.
 */
export function asBuiltin<T extends object>(fn: T, name: string, length: number): T {
  ObjectDefineProperty(fn, "length", { value: length, configurable: true });
  ObjectDefineProperty(fn, "name", { value: name, configurable: true });
  return markNative(fn, name);
}

/**
 * Replaces `holder[name]` with `impl`, keeping the original's descriptor flags, name and length.
 * `impl` must be a method (shorthand): methods are not constructible and have no `prototype`,
 * like every built-in method.
 */
export function replaceMethod(
  holder: object,
  name: string,
  impl: (this: unknown, ...args: never[]) => unknown,
): void {
  const descriptor = Reflect.getOwnPropertyDescriptor(holder, name);
  const original = descriptor?.value as ((...args: unknown[]) => unknown) | undefined;
  asBuiltin(impl, name, original?.length ?? impl.length);
  ObjectDefineProperty(holder, name, {
    value: impl,
    writable: descriptor?.writable ?? true,
    enumerable: descriptor?.enumerable ?? false,
    configurable: descriptor?.configurable ?? true,
  });
}

/** Installs the `Function.prototype.toString` that prints replacements as native. */
export function installNativeToString(): void {
  replaceMethod(
    Function.prototype,
    "toString",
    {
      toString(this: unknown) {
        const text = typeof this === "function" ? nativeText.get(this) : undefined;
        return text ?? ReflectApply(FunctionToString, this, []);
      },
    }.toString,
  );
}
