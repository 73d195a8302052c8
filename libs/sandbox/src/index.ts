export {
  Sandbox,
  ScriptInstance,
  ReplaySliceExceeded,
  LiveSliceExceeded,
  type SandboxOptions,
} from "./host.js";
export {
  SandboxLost,
  type InstantiateOptions,
  type ScriptHandle,
  type ScriptSandbox,
} from "./script-sandbox.js";
export {
  compileScript,
  type CompileProblem,
  type CompiledScript,
  type ScriptSource,
} from "./compiler.js";
export type { SubmittedFiles } from "./submitted-files.js";
export { guestBundle, guestEntry, type GuestBundle } from "./guest-bundle.js";
export { SourceMapper } from "./source-map.js";
export {
  EPOCHS,
  SUPPORTED_EPOCHS,
  CURRENT_EPOCH,
  findEpoch,
  isDraft,
  newRunEpoch,
  newRunEpochProblem,
  runtimeOf,
  runtimeMismatches,
  currentEnvironment,
  epochSupport,
  type EpochRelease,
  type EpochEnvironment,
  type EpochSupport,
  type ReplayOptions,
} from "./epochs.js";
export { assertReplayableHere, replayRuntimeProblem, nodeOf } from "./replay-runtime.js";
