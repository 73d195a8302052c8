export {
  runInProcess,
  DEFAULT_START,
  type InProcessOptions,
  type InProcessResult,
  type InProcessStatus,
  type ScheduledSignal,
} from "./run-in-process.js";
export { invokeTool, type CallOutcome, type InvokeOptions } from "./invoke.js";
export { VirtualSchedule } from "./virtual-clock.js";
export { Executor, type Taken } from "./live/executor.js";
export type { ExecutorOptions, FaultPoint } from "./live/executor-options.js";
export { WakeUp } from "./live/wake-up.js";
export { activationFailureLog, quarantineLog } from "./live/failure-log.js";
export { GroupCommitter } from "./live/group-commit.js";
export { EpochMigrator, type EpochMigratorOptions } from "./epoch-migrator.js";
export { checkReplay, failureVerdict, type ReplayCheck } from "./replay-check.js";
export { previewFork, type ForkPreview } from "./fork-preview.js";
export { ReplayPool, type ReplayChecks, type ReplayPoolOptions } from "./replay-pool.js";
export { ReplayProcess } from "./replay-process.js";
export { describeToolsets, publishToolsets } from "./toolset-description.js";
export { PRESENCE_LIVE_MS, announceWorker } from "./presence.js";
export {
  SANDBOX_NICE,
  SandboxProcesses,
  type SandboxProcessesOptions,
} from "./sandbox-processes.js";
export { Redactor, isMarker } from "./capture/redactor.js";
export { CapturePolicyCache } from "./capture/capture-policy-cache.js";
export { firstRedacted, notReplayable } from "./capture/not-replayable.js";
export { PATTERN_BUDGET_MS, PATTERN_TIMEOUT_RULE } from "./capture/bounded-patterns.js";
