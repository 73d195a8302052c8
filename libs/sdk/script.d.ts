/**
 * `@rewind/sdk/script`: the types of the `"rewind"` module scripts import, and of the globals the
 * sandbox gives them. Types only: at run time the compiler provides the module itself.
 *
 * A project types its scripts with a declaration its script tsconfig maps `"rewind"` to (`paths`),
 * so the name resolves to these types even where the unrelated npm package `rewind` is installed:
 *
 *     // rewind.d.ts (written by `rewind init`)
 *     import type toolset from "./tools.js";
 *     import type { ScriptTools } from "@rewind/sdk/script";
 *     export { sleep, waitForSignal } from "@rewind/sdk/script";
 *     export declare const tools: ScriptTools<typeof toolset>;
 *
 * The script tsconfig loads no Node types (`"types": []`), so `process`, `require` or `Buffer` in a
 * script is a type error, as it is an error in the sandbox.
 */
import type { Duration, Toolset, ToolDefinitions } from "@rewind/core";

export type { Duration };

type Definitions<T> = T extends Toolset<infer D> ? D : T;
type RunOf<T> = T extends { run: infer F } ? F : T;

/** One tool as a script calls it: the toolset's argument type in, a promise of its result out. */
export type ScriptTool<F> = F extends (args: infer A, ...rest: never[]) => infer R
  ? (...args: undefined extends A ? [args?: A] : [args: A]) => Promise<Awaited<R>>
  : never;

/**
 * The script's `tools`, typed by a toolset (`typeof toolset`, from `defineToolset`) or by a plain
 * interface of functions: a wrong tool name, a wrong argument or a misused result is a type error.
 */
export type ScriptTools<T extends Toolset | ToolDefinitions | object> = {
  readonly [K in keyof Definitions<T>]: ScriptTool<RunOf<Definitions<T>[K]>>;
};

/** Waits this long, in the run's time: `sleep("10d")` survives restarts and deploys. */
export declare function sleep(duration: Duration): Promise<void>;

/**
 * Waits for the next signal of this name sent to the run (`rewind signal`, `POST
 * /v1/runs/:id/signals/:name`) and returns its payload, or `undefined` after `timeout`.
 */
export declare function waitForSignal<T = unknown>(
  name: string,
  options?: { timeout?: Duration },
): Promise<T | undefined>;

/** The sandbox's globals besides the language's own (its time, randomness and output). */
declare global {
  /** Journaled output: log/info/debug to stdout, warn/error to stderr. */
  var console: {
    log(...data: unknown[]): void;
    info(...data: unknown[]): void;
    debug(...data: unknown[]): void;
    trace(...data: unknown[]): void;
    warn(...data: unknown[]): void;
    error(...data: unknown[]): void;
    dir(value: unknown): void;
    table(...data: unknown[]): void;
    assert(condition: unknown, ...data: unknown[]): void;
  };
  /** Journaled timers, in the run's time. */
  function setTimeout<A extends unknown[]>(
    callback: (...args: A) => void,
    ms?: number,
    ...args: A
  ): number;
  function setInterval<A extends unknown[]>(
    callback: (...args: A) => void,
    ms?: number,
    ...args: A
  ): number;
  function clearTimeout(handle: number | undefined): void;
  function clearInterval(handle: number | undefined): void;
  function queueMicrotask(callback: () => void): void;
  /** Random values from the run's seeded stream: the same on every replay. */
  var crypto: {
    getRandomValues<T extends ArrayBufferView>(array: T): T;
    randomUUID(): string;
  };
  class TextEncoder {
    readonly encoding: "utf-8";
    encode(input?: string): Uint8Array;
  }
  class TextDecoder {
    constructor(label?: "utf-8" | "utf8");
    readonly encoding: "utf-8";
    decode(input?: ArrayBufferView | ArrayBuffer): string;
  }
  function atob(data: string): string;
  function btoa(data: string): string;
  /** Where the run's toolset has a `fetch` tool: a journaled call to it. String bodies only. */
  function fetch(
    url: string,
    init?: { method?: string; headers?: Record<string, string>; body?: string },
  ): Promise<{
    readonly status: number;
    readonly statusText: string;
    readonly ok: boolean;
    readonly headers: Readonly<Record<string, string>>;
    readonly url: string;
    text(): Promise<string>;
    json(): Promise<unknown>;
  }>;
}
