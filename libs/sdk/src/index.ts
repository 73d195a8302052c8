export {
  defineToolset,
  isToolset,
  EMPTY_TOOLSET,
  type Toolset,
  type Tool,
  type ToolContext,
  type ToolDefinition,
  type ToolFunction,
} from "@rewind/core";
export {
  Rewind,
  RewindApiError,
  type RewindOptions,
  type RunView,
  type StartRun,
  type RunStatus,
  type ForkPreview,
} from "./client.js";
