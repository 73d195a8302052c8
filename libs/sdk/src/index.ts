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
} from "@rewind/core";
export {
  Rewind,
  RewindApiError,
  type RewindOptions,
  type RunView,
  type StartRun,
  type RunStatus,
  type ForkPreview,
  type ReplayResult,
  type TokenView,
  type LimitsView,
} from "./client.js";
export type { FollowOptions } from "./journal-stream.js";
export { httpFetch } from "./http-fetch.js";
export type {
  EntryLabel,
  EpochView,
  PendingQuarantineRequest,
  QuarantineActionResult,
  QuarantineDetail,
  QuarantineEvent,
  QuarantineSummary,
} from "./quarantine.js";
