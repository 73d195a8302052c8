import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/**
 * Rewind's metrics, in one registry per process. Names follow rewind_<subsystem>_<name>_<unit>,
 * base units (seconds), counters end in _total, and no label carries a run id (unbounded).
 * Metrics are a projection of what the journal says happened; none is a source of truth.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: "rewind_process_" });

const LATENCY_BUCKETS = [0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

export const metrics = {
  activations: new Counter({
    name: "rewind_executor_activations_total",
    help: "Activations processed, by how the run was found: hot (in memory) or cold (replayed)",
    labelNames: ["kind"] as const,
    registers: [registry],
  }),
  commits: new Counter({
    name: "rewind_executor_appends_total",
    help: "Journal appends, by outcome: ok, or lease_lost (a stale owner was fenced)",
    labelNames: ["outcome"] as const,
    registers: [registry],
  }),
  entries: new Counter({
    name: "rewind_executor_entries_total",
    help: "Journal entries committed, by kind",
    labelNames: ["kind"] as const,
    registers: [registry],
  }),
  commitSeconds: new Histogram({
    name: "rewind_executor_commit_duration_seconds",
    help: "Time a group commit takes (one database round trip and fsync)",
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  }),
  replaySeconds: new Histogram({
    name: "rewind_executor_replay_duration_seconds",
    help: "Time to rebuild a cold run: read its journal and replay it",
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  }),
  toolCalls: new Counter({
    name: "rewind_executor_tool_calls_total",
    help: "Tool invocations, by toolset and outcome (ok or error)",
    labelNames: ["toolset", "outcome"] as const,
    registers: [registry],
  }),
  hotRuns: new Gauge({
    name: "rewind_executor_hot_runs",
    help: "Runs whose sandbox is alive in this process",
    registers: [registry],
  }),
  hotHeapBytes: new Gauge({
    name: "rewind_executor_hot_heap_bytes",
    help: "V8 heap in use by this process's sandboxes (what the hot-run cache is bounded by)",
    registers: [registry],
  }),
  evictions: new Counter({
    name: "rewind_executor_evictions_total",
    help: "Idle hot runs dropped from memory (replayed cold when next needed), by what was full",
    labelNames: ["limit"] as const,
    registers: [registry],
  }),
  epochOpenRuns: new Gauge({
    name: "rewind_epoch_open_runs",
    help: "Runs not ended, by determinism epoch and status: a run of an epoch no live worker supports waits here",
    labelNames: ["epoch", "status"] as const,
    registers: [registry],
  }),
  runsEnded: new Counter({
    name: "rewind_executor_runs_ended_total",
    help: "Runs that ended here, by status",
    labelNames: ["status"] as const,
    registers: [registry],
  }),
  divergences: new Counter({
    name: "rewind_executor_divergences_total",
    help: "Replays that diverged from their journal (the run is quarantined)",
    registers: [registry],
  }),
  quarantined: new Counter({
    name: "rewind_quarantine_quarantined_total",
    help: "Runs a worker quarantined, by reason (divergence: a replay left its journal; invalid-journal: a journal that cannot be replayed)",
    labelNames: ["reason"] as const,
    registers: [registry],
  }),
  quarantineReleases: new Counter({
    name: "rewind_quarantine_releases_total",
    help: "Quarantined runs released for a replay, by the epoch they were released onto",
    labelNames: ["epoch"] as const,
    registers: [registry],
  }),
  quarantineGiveUps: new Counter({
    name: "rewind_quarantine_give_ups_total",
    help: "Quarantined runs an operator gave up on (they fail)",
    registers: [registry],
  }),
  quarantineDismissed: new Counter({
    name: "rewind_quarantine_requests_dismissed_total",
    help: "Operators' requests that no longer applied when acted on (the run had left that quarantine)",
    registers: [registry],
  }),
  quarantinedRuns: new Gauge({
    name: "rewind_quarantine_runs",
    help: "Runs in quarantine now, by epoch and reason (read from the store by the quarantine service)",
    labelNames: ["epoch", "reason"] as const,
    registers: [registry],
  }),
  replayChecks: new Counter({
    name: "rewind_replay_checks_total",
    help: "Replay checks and fork previews run on the replay threads, by kind (check, preview-fork) and outcome (match, divergence, ok, error)",
    labelNames: ["kind", "outcome"] as const,
    registers: [registry],
  }),
  replayCheckSeconds: new Histogram({
    name: "rewind_replay_check_duration_seconds",
    help: "Time a replay check or fork preview takes, waiting for a replay thread included",
    labelNames: ["kind"] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  }),
  apiRequests: new Counter({
    name: "rewind_api_requests_total",
    help: "API requests, by route and status code",
    labelNames: ["route", "status"] as const,
    registers: [registry],
  }),
  apiSeconds: new Histogram({
    name: "rewind_api_request_duration_seconds",
    help: "API request latency, by route",
    labelNames: ["route"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  }),
};
