export type {
  CreateRunOutcome,
  StartKey,
  StartLimits,
  StartLoad,
  Store,
  StoredScript,
  RunRecord,
  RunRoute,
  LoadedRun,
  RunStatus,
  Lease,
  RunAppend,
  ActivationRecord,
  AppendOutcome,
  InboxItem,
  DueTimer,
  ListRunsFilter,
  RunsQuery,
  DeferredValue,
} from "./store.js";
export { ENDED_STATUSES, FIRST_CLAIM_TOKEN } from "./store.js";
export { checkScopes, tokenIdOf, type TokenGrant, type TokenInfo } from "./tokens.js";
export type {
  QuarantineAction,
  QuarantineRequest,
  NewQuarantineRequest,
  QuarantinedRun,
  QuarantineCount,
  EpochRunCount,
} from "./quarantine.js";
export type { ToolDescription, ToolsetDescription, PublishedToolset } from "./toolsets.js";
export type { LiveWorker } from "./workers.js";
export type {
  EpochCheck,
  EpochCheckReport,
  EpochMove,
  EpochRunVerdict,
  NewEpochCheck,
} from "./epoch-moves.js";
export type {
  CommittedRow,
  CommittedActivation,
  ProjectionWindow,
  ProjectionCursor,
  ProjectedRun,
} from "./projections.js";
export {
  WebhookRows,
  newWebhookSecret,
  type WebhookEndpoint,
  type WebhookEvent,
  type WebhookDelivery,
  type WebhookAttempt,
  type DeliveryStatus,
  type DueDelivery,
  type AttemptOutcome,
} from "./webhooks.js";
export { openStore, openSqlClient, type StoreConfig } from "./open-store.js";
export { migrate, checkSchema, SCHEMA_VERSION } from "./migrate.js";
export { FolderBlobStore, type BlobStore } from "./blobs.js";
export { S3BlobStore, type S3BlobStoreOptions } from "./s3-blobs.js";
export { blobStoreFromUrl, parseBlobUrl, type BlobLocation } from "./blob-url.js";
export { SqlStore } from "./sql-store.js";
export type { NamespaceLimits } from "./limits.js";
export { PayloadCodec, codecFromKeys, isSealed, CODEC_KEYS_ENV, SEALED_PREFIX } from "./codec.js";
export { CODEC_SETTING_CACHE_MS, type CodecSetting } from "./codec-settings.js";
export {
  CAPTURE_POLICY_CACHE_MS,
  type CapturePolicy,
  type CaptureRules,
} from "./capture-policies.js";
export type { SqlClient } from "./sql.js";
export { databaseUnavailable } from "./unavailable.js";
export { INLINE_VALUE_LIMIT } from "./encoding.js";
