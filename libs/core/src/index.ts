export type { Json } from "./json.js";
export { canonicalize, inCanonicalOrder, parseJson } from "./canonical-json.js";
export { valueRef, valueRefOfCanonical, utf8Length, type ValueRef } from "./values.js";
export { parseDuration, type Duration } from "./duration.js";
export { newRunId, newSeed, isSeed, callIdOf } from "./ids.js";
export {
  LIMITS,
  LIMIT_NAMES,
  limitDefaults,
  effectiveLimits,
  limitExceeded,
  limitsEnforcedAt,
  type LimitName,
  type Limits,
} from "./limits.js";
export { ERROR_TABLE, RewindError, isErrorCode, toErrorData, type ErrorCode } from "./errors.js";
export {
  isCommandEntry,
  isEventEntry,
  isTerminalEntry,
  orderEntry,
  type JournalEntry,
  type CommandEntry,
  type EventEntry,
  type PlatformEntry,
  type EntryKind,
  type ErrorData,
  type RunStartedEntry,
  type RunCancelledEntry,
  type RunQuarantinedEntry,
  type RunReleasedEntry,
  type CallEntry,
  type TimerSetEntry,
  type TimerCancelEntry,
  type OutputEntry,
  type RunCompletedEntry,
  type RunFailedEntry,
  type CallResultEntry,
  type CallErrorEntry,
  type TimerFiredEntry,
  type SignalEntry,
} from "./entries.js";
export type { GuestCommand, GuestEvent } from "./wall.js";
export { firstActivationOf, startedAsHinted, type FirstActivation } from "./first-activation.js";
export { shortForm } from "./short-form.js";
export {
  defineToolset,
  isToolset,
  EMPTY_TOOLSET,
  type Toolset,
  type Tool,
  type ToolContext,
  type ToolDefinition,
  type ToolFunction,
  type ToolDefinitions,
} from "./toolset.js";
export { RUN_STATUSES, type RunStatus } from "./run-status.js";
export { SCOPES, DEFAULT_SCOPES, isScope, type Scope } from "./scopes.js";
