export { Sandbox, ScriptInstance, ReplaySliceExceeded, type SandboxOptions } from "./host.js";
export { compileScript, type CompiledScript, type ScriptSource } from "./compiler.js";
export { guestBundle, type GuestBundle } from "./guest-bundle.js";
export { SourceMapper } from "./source-map.js";
