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
  type RunList,
  type RunListFilter,
  type StartRun,
  type RunStatus,
  type ForkPreview,
  type ReplayResult,
  type TokenView,
} from "./client.js";
/** The journal's and values' shapes, for clients that read journals (the dashboard). */
export type { ErrorData, Json, JournalEntry } from "@rewind/core";
export type { FollowOptions } from "./journal-stream.js";
export { httpFetch } from "./http-fetch.js";
export type {
  EntryLabel,
  EpochCheckView,
  EpochRunVerdict,
  EpochView,
  PendingQuarantineRequest,
  QuarantineActionResult,
  QuarantineDetail,
  QuarantineEvent,
  QuarantineSummary,
} from "./quarantine.js";
