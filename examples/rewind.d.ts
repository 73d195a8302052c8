// The "rewind" module the examples import, typed by their toolset: tsconfig.json maps "rewind"
// here. `rewind init` writes the same file into a new project.
import type toolset from "./tools.js";
import type { ScriptTools } from "@rewind/sdk/script";
export { sleep, waitForSignal } from "@rewind/sdk/script";
export declare const tools: ScriptTools<typeof toolset>;
