export { createApi, DEFAULT_BODY_LIMIT, type ApiOptions } from "./app.js";
export type { Doorbell } from "./doorbell.js";
export type { ApiLog } from "./context.js";
export { LocalRunChanges, POLL_ONLY, type RunChanges, type RunWatch } from "./run-changes.js";
export { RedisRunChanges } from "./redis-run-changes.js";
export {
  CreateRunBody,
  CreatedRun,
  ErrorResponse,
  JournalPage,
  RunList,
  RunResult,
  RunView,
  MAX_WAIT_MS,
  DEFAULT_TTL_MS,
} from "@rewind/contract";
export type { ErrorBody } from "./errors.js";
export { startApiService } from "./main.js";
export { newRunEpochFrom, newRunEpochSetting } from "./new-run-epoch.js";
