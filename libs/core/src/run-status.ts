/** A run's statuses (docs/contract.md): the one list the store, the API, the SDK and the CLI share. */
export const RUN_STATUSES = [
  "queued",
  "running",
  "waiting",
  "completed",
  "failed",
  "cancelled",
  "quarantined",
] as const;

export type RunStatus = (typeof RUN_STATUSES)[number];
