import { parseDuration, type Duration } from "@rewind/core/duration";
import { userCallsite } from "./callsite.js";
import {
  ObjectDefineProperty,
  ObjectFreeze,
  OriginalPromise,
  PromiseThen,
  promiseResolve,
} from "./intrinsics.js";
import { callTool, cancelTimer, checkWait, failRun, nextSignal, setTimer } from "./scheduler.js";

/** The `rewind` module scripts import: `tools`, `sleep`, `waitForSignal`. */
export function createRewindModule() {
  // Any property is a tool; `then` is not, so `await tools` does not mistake it for a promise.
  const tools = new Proxy(ObjectFreeze({}), {
    get(_target, name) {
      if (typeof name !== "string" || name === "then") return undefined;
      return (args?: unknown) => callTool(name, args === undefined ? null : args);
    },
  }) as Record<string, (args?: unknown) => Promise<unknown>>;

  const sleep = (duration: Duration): Promise<void> => {
    const ms = parseDuration(duration, "sleep()'s duration");
    return new OriginalPromise((resolve) => {
      checkWait(ms, "sleep()'s duration"); // a rejection, as a wait that cannot be
      setTimer(ms, () => resolve());
    });
  };

  const waitForSignal = <T = unknown>(
    name: string,
    options?: { timeout?: Duration },
  ): Promise<T | undefined> => {
    if (typeof name !== "string" || name.length === 0) {
      throw new TypeError("waitForSignal(name) needs the signal's name as a non-empty string");
    }
    const timeout =
      options?.timeout === undefined
        ? undefined
        : parseDuration(options.timeout, "waitForSignal()'s timeout");
    return nextSignal(name, timeout) as Promise<T | undefined>;
  };

  return ObjectFreeze({ tools, sleep, waitForSignal });
}

/** setTimeout & co. as journaled timers; queueMicrotask as the plain microtask it is. */
export function installTimers(global: typeof globalThis): void {
  const intervals = new Map<number, number>(); // the handle the script holds → the live timer id
  const delayOf = (ms: unknown) => {
    const n = Number(ms);
    return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
  };
  const define = (name: string, value: unknown) =>
    ObjectDefineProperty(global, name, { value, writable: true, configurable: true });

  define("setTimeout", (callback: unknown, ms?: unknown, ...args: unknown[]) => {
    if (typeof callback !== "function") throw new TypeError("setTimeout needs a function");
    // Durable like sleep: the full delay, journaled, even past 2^31-1 ms (where Node fires at once).
    checkWait(delayOf(ms), "setTimeout's delay");
    return setTimer(delayOf(ms), () => callback(...args));
  });
  define("setInterval", (callback: unknown, ms?: unknown, ...args: unknown[]) => {
    if (typeof callback !== "function") throw new TypeError("setInterval needs a function");
    const delay = Math.max(1, delayOf(ms));
    checkWait(delay, "setInterval's delay");
    let handle = 0;
    // Every tick's timer is labelled with the setInterval line (kept, so captured always).
    const callsite = userCallsite();
    const arm = () => {
      intervals.set(handle, setTimer(delay, tick, callsite));
    };
    const tick = () => {
      arm(); // re-armed first, so a clearInterval inside the callback cancels the next tick
      callback(...args);
    };
    handle = setTimer(delay, tick, callsite);
    intervals.set(handle, handle);
    return handle;
  });
  const clear = (handle: unknown) => {
    if (typeof handle !== "number") return;
    const live = intervals.get(handle);
    if (live !== undefined) intervals.delete(handle);
    cancelTimer(live ?? handle);
  };
  define("clearTimeout", clear);
  define("clearInterval", clear);
  define("queueMicrotask", (callback: unknown) => {
    if (typeof callback !== "function") throw new TypeError("queueMicrotask needs a function");
    void PromiseThen(
      promiseResolve(undefined),
      () => {
        try {
          callback();
        } catch (error) {
          failRun(error);
        }
      },
      () => {},
    );
  });
}

/**
 * `fetch` as the journaled tool call `fetch`: available when the run's toolset provides that tool
 * (otherwise the run fails with TOOL_NOT_FOUND saying so). The response is data, read once.
 */
export function installFetch(
  global: typeof globalThis,
  tools: Record<string, (args?: unknown) => Promise<unknown>>,
) {
  const fetch = async (
    input: unknown,
    init?: { method?: string; headers?: Record<string, string>; body?: unknown },
  ) => {
    const url =
      typeof input === "string" ? input : String((input as { url?: unknown })?.url ?? input);
    const body = init?.body;
    if (body !== undefined && body !== null && typeof body !== "string") {
      throw new TypeError("fetch in a Rewind script sends string bodies: use JSON.stringify(body)");
    }
    const response = (await tools.fetch!({
      url,
      method: init?.method ?? "GET",
      headers: init?.headers ?? {},
      body: body ?? null,
    })) as { status: number; statusText?: string; headers?: Record<string, string>; body: string };
    const text = typeof response.body === "string" ? response.body : JSON.stringify(response.body);
    return ObjectFreeze({
      status: response.status,
      statusText: response.statusText ?? "",
      ok: response.status >= 200 && response.status < 300,
      headers: ObjectFreeze({ ...response.headers }),
      url,
      text: async () => text,
      json: async () => JSON.parse(text) as unknown,
    });
  };
  ObjectDefineProperty(global, "fetch", { value: fetch, writable: true, configurable: true });
}
