/**
 * The guest runtime: evaluated once in each run's context before the script, it replaces the
 * non-deterministic globals and leaves the host a three-function interface (`start`, `deliver`,
 * `collect`) on a global the host reads and deletes before the script runs. The script never sees
 * a reference to anything of the host: the host only calls in, passing and receiving strings.
 */
import { createRewindModule, installFetch, installTimers } from "./api.js";
import { installConsole } from "./console.js";
import { installEncoding } from "./encoding.js";
import { installIntl } from "./intl.js";
import { JsonParse, ObjectDefineProperty, promiseResolve } from "./intrinsics.js";
import { installRandom } from "./random.js";
import { clock, collect, deliver, failRun, settleMain, sites } from "./scheduler.js";
import { limits } from "./serialize.js";
import { installTime } from "./time.js";

interface StartConfig {
  at: number;
  seed: string;
  maxValueBytes: number;
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
    installTime(global);
    installIntl();
    installEncoding(global);
    installRandom(global, config.seed);
    installConsole(global);
    installTimers(global);
    installFetch(global, rewind.tools);
    ObjectDefineProperty(global, "__rewind_module", { value: rewind, configurable: true });
  },
  /** Calls the script's default export with the input; its commands are then collected. */
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
