import type { Limits } from "@rewind/core";
import type { AddressPolicy } from "@rewind/core/outbound-address";
import type { ReplayChecks } from "@rewind/executor";
import type { Store } from "@rewind/store";
import type { Doorbell } from "./doorbell.js";
import type { RunChanges } from "./run-changes.js";
import type { Shutdown } from "./shutdown.js";

/** What every route shares: one bag of resources, built once by `createApi`. */
export interface ApiContext {
  store: Store;
  doorbell: Doorbell;
  /** Re-executes scripts against journals off the event loop (replay checks, fork previews). */
  replays: ReplayChecks;
  changes: RunChanges;
  version: string;
  /** The determinism epoch new runs are created on. */
  epoch: number;
  /** The largest value (an input, a signal's payload) a run can take, in bytes of JSON. */
  maxValueBytes: number;
  /** The namespace limits' defaults in this process (a namespace's own settings override them). */
  limits: Limits;
  /** How often a long-poll reads the store again when no change is announced. */
  pollMs: number;
  /** The API's closing: long-polls answer at once instead of holding the close up. */
  shutdown: Shutdown;
  log: ApiLog;
  /** Which addresses a webhook endpoint may have (REWIND_WEBHOOK_ALLOW opens private ones). */
  webhookAddresses: AddressPolicy;
  /** Where the dashboard is served (`/dashboard/`), if this API serves it. */
  dashboard?: string;
  /** An operator's quarantine request was stored: a quarantine service in this process may look. */
  onQuarantineRequest?: (runId: string) => void;
  /** A namespace's limits were set: an executor in this process may read them anew. */
  onLimitsChanged?: (namespace: string) => void;
}

export interface ApiLog {
  /** Something went wrong that the client cannot fix (a store error, a doorbell that failed). */
  error(message: string, error: unknown): void;
}
