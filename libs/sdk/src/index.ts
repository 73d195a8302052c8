export {
  defineToolset,
  isToolset,
  EMPTY_TOOLSET,
  type Toolset,
  type Tool,
  type ToolContext,
  type ToolDefinition,
  type ToolFunction,
} from "./toolset.js";
