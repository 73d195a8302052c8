/**
 * Every metric a Rewind process serves, in one list: `/metrics` is rendered from it and the
 * Grafana dashboards are checked against it (deploy/grafana). Names follow
 * rewind_<subsystem>_<name>_<unit> in base units (seconds, bytes); counters end in _total and
 * nothing else does; no label carries a run id (unbounded). A histogram's exemplar carries the
 * run's trace id instead, in the OpenMetrics format only.
 */
export type MetricType = "counter" | "gauge" | "histogram";

/** The processes that serve a metric (each serves its own /metrics). */
export type Service = "api" | "worker" | "quarantine" | "projector";

export interface MetricDefinition {
  readonly name: string;
  readonly type: MetricType;
  /** The base unit the name ends with (OpenMetrics `# UNIT`), or "" for a count. */
  readonly unit: "seconds" | "bytes" | "";
  readonly labels: readonly string[];
  readonly help: string;
  readonly buckets?: readonly number[];
  readonly servedBy: readonly Service[];
}

const LATENCY = [0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const SLOW = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Queueing and timers: from a millisecond to a minute. */
const WAIT = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const EVERY: readonly Service[] = ["api", "worker", "quarantine", "projector"];
const WORKER: readonly Service[] = ["worker"];
const QUARANTINE: readonly Service[] = ["quarantine"];
const API: readonly Service[] = ["api"];
const PROJECTOR: readonly Service[] = ["projector"];

export const DEFINITIONS = {
  // ---- runs
  runsStarted: {
    name: "rewind_api_runs_started_total",
    type: "counter",
    unit: "",
    labels: ["how"],
    help: "Runs the API stored, by how: start (a new run) or fork (a corrected script over a parent's journal)",
    servedBy: API,
  },
  limitsExceeded: {
    name: "rewind_limits_exceeded_total",
    type: "counter",
    unit: "",
    labels: ["limit"],
    help: "Namespace limits hit, by limit: starts refused by the API (runsInFlight, startsPerSecond), runs failed by the executor (journalEntries, journalBytes, outputBytes, timers)",
    servedBy: ["api", "worker"],
  },
  runsEnded: {
    name: "rewind_executor_runs_ended_total",
    type: "counter",
    unit: "",
    labels: ["status"],
    help: "Runs that ended here, by status (completed, failed, cancelled)",
    servedBy: WORKER,
  },
  // ---- activations
  activations: {
    name: "rewind_executor_activations_total",
    type: "counter",
    unit: "",
    labels: ["kind"],
    help: "Activations processed, by how the run was found: hot (in memory) or cold (replayed)",
    servedBy: WORKER,
  },
  activationSeconds: {
    name: "rewind_executor_activation_duration_seconds",
    type: "histogram",
    unit: "seconds",
    labels: ["kind"],
    help: "Time an activation takes, from taking it to its last commit, by kind: hot or cold (the replay included)",
    buckets: SLOW,
    servedBy: WORKER,
  },
  scheduleToStart: {
    name: "rewind_executor_activation_schedule_to_start_seconds",
    type: "histogram",
    unit: "seconds",
    labels: ["delivery"],
    help: "Time from a ring (or a delayed ring falling due) to a worker taking the activation, by delivery: sticky (to the worker holding the run hot), direct (a new run, straight to a worker with room for it) or shared (the epoch's queue)",
    buckets: WAIT,
    servedBy: WORKER,
  },
  replaySeconds: {
    name: "rewind_executor_replay_duration_seconds",
    type: "histogram",
    unit: "seconds",
    labels: [],
    help: "Time to rebuild a cold run: read its journal and replay it",
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    servedBy: WORKER,
  },
  // ---- journal
  commits: {
    name: "rewind_executor_appends_total",
    type: "counter",
    unit: "",
    labels: ["outcome"],
    help: "Journal appends, by outcome: ok, or lease_lost (a stale owner was fenced)",
    servedBy: WORKER,
  },
  entries: {
    name: "rewind_executor_entries_total",
    type: "counter",
    unit: "",
    labels: ["kind"],
    help: "Journal entries a worker committed, by kind (run.started is the API's: rewind_api_runs_started_total)",
    servedBy: WORKER,
  },
  commitSeconds: {
    name: "rewind_executor_commit_duration_seconds",
    type: "histogram",
    unit: "seconds",
    labels: [],
    help: "Time a group commit takes (one database round trip and fsync)",
    buckets: LATENCY,
    servedBy: WORKER,
  },
  leaseLosses: {
    name: "rewind_executor_lease_losses_total",
    type: "counter",
    unit: "",
    labels: [],
    help: "Appends refused because another worker had taken the run's lease (this worker was paused or partitioned; the run goes on there)",
    servedBy: WORKER,
  },
  // ---- tools and timers
  toolCalls: {
    name: "rewind_executor_tool_calls_total",
    type: "counter",
    unit: "",
    labels: ["toolset", "tool", "outcome"],
    help: "Tool invocations, by toolset, tool and outcome (ok or error, after the tool's own retries)",
    servedBy: WORKER,
  },
  toolSeconds: {
    name: "rewind_executor_tool_call_duration_seconds",
    type: "histogram",
    unit: "seconds",
    labels: ["toolset", "tool", "outcome"],
    help: "Time a tool invocation takes, its retries and their backoff included, by toolset, tool and outcome",
    buckets: SLOW,
    servedBy: WORKER,
  },
  timerLateness: {
    name: "rewind_executor_timer_lateness_seconds",
    type: "histogram",
    unit: "seconds",
    labels: [],
    help: "How long after its due time a timer fired (its timer.fired entry was made)",
    buckets: WAIT,
    servedBy: WORKER,
  },
  // ---- hot cache
  hotRuns: {
    name: "rewind_executor_hot_runs",
    type: "gauge",
    unit: "",
    labels: [],
    help: "Runs whose sandbox is alive in this process",
    servedBy: WORKER,
  },
  hotHeapBytes: {
    name: "rewind_executor_hot_heap_bytes",
    type: "gauge",
    unit: "bytes",
    labels: [],
    help: "V8 heap in use by this process's sandboxes (what the hot-run cache is bounded by)",
    servedBy: WORKER,
  },
  evictions: {
    name: "rewind_executor_evictions_total",
    type: "counter",
    unit: "",
    labels: ["limit"],
    help: "Idle hot runs dropped from memory (replayed cold when next needed), by what was full",
    servedBy: WORKER,
  },
  // ---- epochs, queue and quarantine
  queueBacklog: {
    name: "rewind_queue_backlog",
    type: "gauge",
    unit: "",
    labels: ["epoch"],
    help: "Activations waiting for a worker, by epoch: waiting + prioritized + due delayed jobs (what the autoscalers read), counted at each scrape",
    servedBy: QUARANTINE,
  },
  epochOpenRuns: {
    name: "rewind_epoch_open_runs",
    type: "gauge",
    unit: "",
    labels: ["epoch", "status"],
    help: "Runs not ended, by determinism epoch and status: a run of an epoch no live worker supports waits here",
    servedBy: QUARANTINE,
  },
  divergences: {
    name: "rewind_executor_divergences_total",
    type: "counter",
    unit: "",
    labels: [],
    help: "Replays that diverged from their journal (the run is quarantined)",
    servedBy: WORKER,
  },
  quarantined: {
    name: "rewind_quarantine_quarantined_total",
    type: "counter",
    unit: "",
    labels: ["reason"],
    help: "Runs a worker quarantined, by reason (divergence: a replay left its journal; invalid-journal: a journal that cannot be replayed; not-replayable: a capture policy redacted what its replay needs)",
    servedBy: WORKER,
  },
  // ---- projections (services/projector)
  projectorDelivered: {
    name: "rewind_projector_delivered_total",
    type: "counter",
    unit: "",
    labels: ["sink"],
    help: "Items a projection sink delivered (spans for otel), re-sends included",
    servedBy: PROJECTOR,
  },
  projectorFailures: {
    name: "rewind_projector_failures_total",
    type: "counter",
    unit: "",
    labels: ["sink"],
    help: "Windows a sink failed to deliver (each is sent again from the same cursor)",
    servedBy: PROJECTOR,
  },
  projectorLag: {
    name: "rewind_projector_lag_seconds",
    type: "gauge",
    unit: "seconds",
    labels: ["sink"],
    help: "Age of the oldest committed journal entry a sink has not delivered (0 when caught up)",
    servedBy: PROJECTOR,
  },
  // ---- webhooks (the projector's dispatcher, docs/webhooks.md)
  webhookDeliveries: {
    name: "rewind_webhook_deliveries_total",
    type: "counter",
    unit: "",
    labels: ["outcome"],
    help: "Webhook delivery attempts, by outcome: delivered (a 2xx), retrying (failed, tried again later), failed (failed, given up)",
    servedBy: PROJECTOR,
  },
  webhookSeconds: {
    name: "rewind_webhook_delivery_duration_seconds",
    type: "histogram",
    unit: "seconds",
    labels: ["outcome"],
    help: "Time a webhook delivery attempt takes, from resolving the endpoint to its answer, by outcome",
    buckets: SLOW,
    servedBy: PROJECTOR,
  },
  webhookPending: {
    name: "rewind_webhook_pending_deliveries",
    type: "gauge",
    unit: "",
    labels: [],
    help: "Webhook deliveries not yet delivered nor given up (due now or waiting for a retry), read from the store",
    servedBy: PROJECTOR,
  },
  webhookEndpointsDisabled: {
    name: "rewind_webhook_endpoints_disabled_total",
    type: "counter",
    unit: "",
    labels: [],
    help: "Webhook endpoints the dispatcher disabled for failing longer than REWIND_WEBHOOK_DISABLE_AFTER",
    servedBy: PROJECTOR,
  },
  quarantineReleases: {
    name: "rewind_quarantine_releases_total",
    type: "counter",
    unit: "",
    labels: ["epoch"],
    help: "Quarantined runs released for a replay, by the epoch they were released onto",
    servedBy: QUARANTINE,
  },
  quarantineGiveUps: {
    name: "rewind_quarantine_give_ups_total",
    type: "counter",
    unit: "",
    labels: [],
    help: "Quarantined runs an operator gave up on (they fail)",
    servedBy: QUARANTINE,
  },
  quarantineDismissed: {
    name: "rewind_quarantine_requests_dismissed_total",
    type: "counter",
    unit: "",
    labels: [],
    help: "Operators' requests that no longer applied when acted on (the run had left that quarantine)",
    servedBy: QUARANTINE,
  },
  quarantinedRuns: {
    name: "rewind_quarantine_runs",
    type: "gauge",
    unit: "",
    labels: ["epoch", "reason"],
    help: "Runs in quarantine now, by epoch and reason (read from the store by the quarantine service)",
    servedBy: QUARANTINE,
  },
  // ---- replay checks (the API's replay threads)
  replayChecks: {
    name: "rewind_replay_checks_total",
    type: "counter",
    unit: "",
    labels: ["kind", "outcome"],
    help: "Replay checks and fork previews run on the replay threads, by kind (check, preview-fork) and outcome (match, divergence, ok, error)",
    servedBy: API,
  },
  replayCheckSeconds: {
    name: "rewind_replay_check_duration_seconds",
    type: "histogram",
    unit: "seconds",
    labels: ["kind"],
    help: "Time a replay check or fork preview takes, waiting for a replay thread included",
    buckets: SLOW,
    servedBy: API,
  },
  // ---- API
  apiRequests: {
    name: "rewind_api_requests_total",
    type: "counter",
    unit: "",
    labels: ["route", "status"],
    help: "API requests, by route pattern and status code",
    servedBy: API,
  },
  apiSeconds: {
    name: "rewind_api_request_duration_seconds",
    type: "histogram",
    unit: "seconds",
    labels: ["route"],
    help: "API request latency, by route pattern",
    buckets: LATENCY,
    servedBy: API,
  },
} as const satisfies Record<string, MetricDefinition>;

/**
 * The process's own figures, from prom-client's collectors, renamed into Rewind's namespace
 * (process_cpu_seconds_total → rewind_process_cpu_seconds_total): only these are served.
 * Node's gauges named *_total (active handles) are left out: promtool rejects them.
 */
export const PROCESS_DEFINITIONS: readonly MetricDefinition[] = [
  ["process_cpu_seconds_total", "counter", "seconds", "CPU time used (user and system)"],
  ["process_resident_memory_bytes", "gauge", "bytes", "Resident memory of the process"],
  ["process_start_time_seconds", "gauge", "seconds", "When the process started (Unix time)"],
  ["process_open_fds", "gauge", "", "File descriptors open"],
  ["nodejs_eventloop_lag_p99_seconds", "gauge", "seconds", "Event loop lag, 99th percentile"],
  ["nodejs_heap_size_used_bytes", "gauge", "bytes", "V8 heap in use (sandboxes not included)"],
  ["nodejs_external_memory_bytes", "gauge", "bytes", "Memory held outside V8's heap (buffers)"],
  ["nodejs_gc_duration_seconds", "histogram", "seconds", "Garbage collections, by kind"],
].map(([source, type, unit, help]) => ({
  name: `rewind_${source!}`,
  type: type as MetricType,
  unit: unit as MetricDefinition["unit"],
  labels: source === "nodejs_gc_duration_seconds" ? ["kind"] : [],
  help: help!,
  servedBy: EVERY,
}));

/** Every metric any Rewind process serves. */
export const ALL_DEFINITIONS: readonly MetricDefinition[] = [
  ...Object.values(DEFINITIONS),
  ...PROCESS_DEFINITIONS,
];
