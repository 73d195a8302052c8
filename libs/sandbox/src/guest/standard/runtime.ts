/**
 * The guest runtime of the standard-JavaScript epochs (2, 3 and 4): epoch 1's runtime
 * (`../runtime.ts`, frozen as released) with the sandbox's deviations from standard JavaScript
 * fixed. It shares epoch 1's modules where they are unchanged (the scheduler, the wire, timers,
 * console, encoding, random streams) and replaces the rest: Date and Intl pinned to UTC and
 * DEFAULT_LOCALE whatever the host's TZ and LANG, built-ins that look and behave like
 * built-ins, Math.E, and WebAssembly's limits. HOW_IT_WORKS.md, "One guest runtime per epoch",
 * lists what differs from a plain V8 context on purpose.
 */
import { createRewindModule, installFetch, installTimers } from "../api.js";
import { installConsole } from "../console.js";
import { installEncoding } from "../encoding.js";
import { JsonParse, ObjectDefineProperty, promiseResolve } from "../intrinsics.js";
import { installRandom } from "../random.js";
import { clock, collect, deliver, failRun, settleMain, sites } from "../scheduler.js";
import { limits } from "../serialize.js";
import { installIntl } from "./intl.js";
import { installNativeToString } from "./natives.js";
import { fixMathRandom, installMathE, nameTimers } from "./standard-globals.js";
import { installTime } from "./time.js";
import { installWebAssembly } from "./wasm.js";

interface StartConfig {
  at: number;
  seed: string;
  maxValueBytes: number;
  /** The isolate's heap limit, which caps WebAssembly memories. */
  memoryLimitMb: number;
}

const global = globalThis;
const rewind = createRewindModule();
let main: ((input: unknown) => unknown) | undefined;

// Sources of non-determinism with no deterministic equivalent are removed outright.
// `gc` exists when the host runs with --expose-gc (non-configurable, but writable): a script
// must not drive the collector.
for (const name of ["WeakRef", "FinalizationRegistry", "SharedArrayBuffer", "Atomics", "gc"]) {
  if (!Reflect.deleteProperty(global, name)) (global as Record<string, unknown>)[name] = undefined;
}

const host = {
  /** Installs the deterministic globals; must run before the script is evaluated. */
  init(configJson: string): void {
    const config = JsonParse(configJson) as StartConfig;
    clock.now = clock.start = config.at;
    limits.maxValueBytes = config.maxValueBytes;
    installNativeToString();
    installMathE();
    installTime(global);
    installIntl();
    installEncoding(global);
    installRandom(global, config.seed);
    fixMathRandom();
    installConsole(global);
    installTimers(global);
    nameTimers(global);
    installFetch(global, rewind.tools);
    installWebAssembly(global, config.memoryLimitMb);
    ObjectDefineProperty(global, "__rewind_module", { value: rewind, configurable: true });
  },
  /** Calls the script's default export. Never throws (see `deliver`): failures fail the run. */
  start(inputJson: string): void {
    try {
      delete (global as Record<string, unknown>).__rewind_module;
      if (typeof main !== "function") {
        failRun(new TypeError("The script must `export default` an async function"));
        return;
      }
      settleMain(promiseResolve(main(JsonParse(inputJson) as unknown)));
    } catch (error) {
      failRun(error); // main threw synchronously
    }
  },
  deliver,
  collect,
  /** "1" or "0": whether commands carry callsites (off while replaying recorded batches). */
  callsites(on: string): void {
    sites.capture = on === "1";
  },
};

ObjectDefineProperty(global, "__rewind_host", { value: host, configurable: true });
ObjectDefineProperty(global, "__rewind_register", {
  value: (fn: (input: unknown) => unknown) => {
    main = fn;
  },
  configurable: true,
});
