/**
 * The built-ins the guest runtime relies on, captured before any script code runs. A script may
 * replace `JSON.stringify` or `Promise.prototype.then` in its own context; the runtime keeps using
 * the originals. (Tampering can only ever harm the tampering run: the host trusts nothing that
 * comes out of the sandbox and validates every command it reads.)
 */
export const ReflectApply = Reflect.apply;
const uncurry =
  <T, A extends unknown[], R>(fn: (this: T, ...args: A) => R) =>
  (self: T, ...args: A): R =>
    ReflectApply(fn, self, args);

export const JsonStringify = JSON.stringify;
export const JsonParse = JSON.parse;
export const ObjectFreeze = Object.freeze;
export const ObjectDefineProperty = Object.defineProperty;
export const ObjectKeys = Object.keys;
export const OriginalDate = Date;
export const OriginalError = Error;
export const OriginalRangeError = RangeError;
export const OriginalPromise = Promise;
/** Promise.resolve without reading `Promise.resolve` (a script may replace it). */
export const promiseResolve = <T>(value: T): Promise<Awaited<T>> =>
  new OriginalPromise<Awaited<T>>((resolve) => resolve(value as Awaited<T>));
export const PromiseThen = uncurry(Promise.prototype.then) as <T>(
  promise: Promise<T>,
  onFulfilled: (value: T) => unknown,
  onRejected: (reason: unknown) => unknown,
) => Promise<unknown>;
export const StringFromCharCode = String.fromCharCode;
