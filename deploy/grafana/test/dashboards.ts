/**
 * The Grafana dashboards, described once: deploy/grafana/*.json are generated from this file
 * (`REWIND_UPDATE_DASHBOARDS=1 npx vitest run deploy/grafana`), and every query is checked
 * against the metric definitions (libs/telemetry) by dashboards.test.ts and run against a real
 * Prometheus by services/worker/test/prometheus.int.test.ts.
 *
 * Counts over the dashboard's range use increase(…[$__range]); rates use $__rate_interval.
 * Gauges that several replicas report alike (the backlog, the quarantine) take max, not sum.
 */
export interface QuerySpec {
  expr: string;
  legend?: string;
}

export interface PanelSpec {
  title: string;
  kind: "timeseries" | "stat";
  /** Grafana's unit id: short, s, bytes, reqps, percentunit, ops. */
  unit: string;
  description: string;
  queries: QuerySpec[];
}

export interface DashboardSpec {
  /** The file under deploy/grafana/ and the dashboard's uid (rewind-<file>). */
  file: string;
  title: string;
  description: string;
  panels: PanelSpec[];
}

const q = (expr: string, legend?: string): QuerySpec => (legend ? { expr, legend } : { expr });
const p99 = (metric: string, by: string) =>
  `histogram_quantile(0.99, sum by (le${by ? `, ${by}` : ""}) (rate(${metric}_bucket[$__rate_interval])))`;

export const DASHBOARDS: DashboardSpec[] = [
  {
    file: "throughput",
    title: "Rewind / Throughput",
    description: "Runs started and ended, tool calls, journal entries and activations",
    panels: [
      {
        title: "Runs started",
        kind: "stat",
        unit: "short",
        description: "Runs the API stored in the range, by how (start, fork)",
        queries: [q("sum by (how) (increase(rewind_api_runs_started_total[$__range]))", "{{how}}")],
      },
      {
        title: "Runs ended",
        kind: "stat",
        unit: "short",
        description: "Runs that ended in the range, by status",
        queries: [
          q("sum by (status) (increase(rewind_executor_runs_ended_total[$__range]))", "{{status}}"),
        ],
      },
      {
        title: "Tool calls",
        kind: "stat",
        unit: "short",
        description: "Tool invocations in the range, by tool",
        queries: [
          q("sum by (tool) (increase(rewind_executor_tool_calls_total[$__range]))", "{{tool}}"),
        ],
      },
      {
        title: "Runs started and ended per second",
        kind: "timeseries",
        unit: "ops",
        description: "Starts by how, ends by status",
        queries: [
          q(
            "sum by (how) (rate(rewind_api_runs_started_total[$__rate_interval]))",
            "started ({{how}})",
          ),
          q(
            "sum by (status) (rate(rewind_executor_runs_ended_total[$__rate_interval]))",
            "ended ({{status}})",
          ),
        ],
      },
      {
        title: "Tool calls per second",
        kind: "timeseries",
        unit: "ops",
        description: "By toolset and tool",
        queries: [
          q(
            "sum by (toolset, tool) (rate(rewind_executor_tool_calls_total[$__rate_interval]))",
            "{{toolset}}.{{tool}}",
          ),
        ],
      },
      {
        title: "Journal entries per second",
        kind: "timeseries",
        unit: "ops",
        description: "Entries workers committed, by kind",
        queries: [
          q("sum by (kind) (rate(rewind_executor_entries_total[$__rate_interval]))", "{{kind}}"),
        ],
      },
      {
        title: "Journal entries",
        kind: "stat",
        unit: "short",
        description: "Entries workers committed in the range, by kind",
        queries: [
          q("sum by (kind) (increase(rewind_executor_entries_total[$__range]))", "{{kind}}"),
        ],
      },
      {
        title: "Activations per second",
        kind: "timeseries",
        unit: "ops",
        description: "Hot (in memory) or cold (replayed)",
        queries: [
          q(
            "sum by (kind) (rate(rewind_executor_activations_total[$__rate_interval]))",
            "{{kind}}",
          ),
        ],
      },
    ],
  },
  {
    file: "latency",
    title: "Rewind / Latency",
    description: "Where time goes: tools, activations, queueing, timers, commits, replays, the API",
    panels: [
      {
        title: "Tool call duration (p99)",
        kind: "timeseries",
        unit: "s",
        description: "Retries and their backoff included, by tool",
        queries: [q(p99("rewind_executor_tool_call_duration_seconds", "tool"), "{{tool}}")],
      },
      {
        title: "Tool calls timed",
        kind: "stat",
        unit: "short",
        description: "Tool invocations timed in the range, by tool and outcome",
        queries: [
          q(
            "sum by (tool, outcome) (increase(rewind_executor_tool_call_duration_seconds_count[$__range]))",
            "{{tool}} {{outcome}}",
          ),
        ],
      },
      {
        title: "Activation duration (p99)",
        kind: "timeseries",
        unit: "s",
        description: "Hot, or cold with its replay",
        queries: [q(p99("rewind_executor_activation_duration_seconds", "kind"), "{{kind}}")],
      },
      {
        title: "Schedule to start (p99)",
        kind: "timeseries",
        unit: "s",
        description: "From a ring to a worker taking it, by delivery",
        queries: [
          q(
            p99("rewind_executor_activation_schedule_to_start_seconds", "delivery"),
            "{{delivery}}",
          ),
        ],
      },
      {
        title: "Timer lateness (p99)",
        kind: "timeseries",
        unit: "s",
        description: "How late timers fire",
        queries: [q(p99("rewind_executor_timer_lateness_seconds", ""), "lateness")],
      },
      {
        title: "Timers fired",
        kind: "stat",
        unit: "short",
        description: "Timers that fired in the range",
        queries: [q("sum(increase(rewind_executor_timer_lateness_seconds_count[$__range]))")],
      },
      {
        title: "Commit duration (p99)",
        kind: "timeseries",
        unit: "s",
        description: "One group commit: a round trip and an fsync",
        queries: [q(p99("rewind_executor_commit_duration_seconds", ""), "commit")],
      },
      {
        title: "Cold replay duration (p99)",
        kind: "timeseries",
        unit: "s",
        description: "Reading a journal and replaying it",
        queries: [q(p99("rewind_executor_replay_duration_seconds", ""), "replay")],
      },
      {
        title: "API request duration (p99)",
        kind: "timeseries",
        unit: "s",
        description: "By route pattern",
        queries: [q(p99("rewind_api_request_duration_seconds", "route"), "{{route}}")],
      },
    ],
  },
  {
    file: "backlog",
    title: "Rewind / Backlog by epoch",
    description:
      "What the autoscalers read: activations waiting per epoch, and open runs per epoch",
    panels: [
      {
        title: "Backlog by epoch",
        kind: "timeseries",
        unit: "short",
        description: "Waiting + prioritized + due delayed activations (rewind_queue_backlog)",
        queries: [q("max by (epoch) (rewind_queue_backlog)", "epoch {{epoch}}")],
      },
      {
        title: "Open runs by epoch",
        kind: "timeseries",
        unit: "short",
        description: "Runs not ended, by epoch and status: an epoch with no worker waits here",
        queries: [
          q("max by (epoch, status) (rewind_epoch_open_runs)", "epoch {{epoch}} {{status}}"),
        ],
      },
      {
        title: "Activations taken per second",
        kind: "timeseries",
        unit: "ops",
        description:
          "By delivery: sticky (hot), direct (new, straight to a worker) or shared (the epoch's queue)",
        queries: [
          q(
            "sum by (delivery) (rate(rewind_executor_activation_schedule_to_start_seconds_count[$__rate_interval]))",
            "{{delivery}}",
          ),
        ],
      },
    ],
  },
  {
    file: "hot-cache",
    title: "Rewind / Hot cache",
    description: "Runs kept in memory by the workers, their heap, and what is evicted",
    panels: [
      {
        title: "Hot runs",
        kind: "stat",
        unit: "short",
        description: "Runs whose sandbox is alive, over every worker",
        queries: [q("sum(rewind_executor_hot_runs)")],
      },
      {
        title: "Hot runs per worker",
        kind: "timeseries",
        unit: "short",
        description: "By worker",
        queries: [q("sum by (instance) (rewind_executor_hot_runs)", "{{instance}}")],
      },
      {
        title: "Sandbox heap per worker",
        kind: "timeseries",
        unit: "bytes",
        description: "What the hot cache is bounded by (maxHotMb)",
        queries: [q("sum by (instance) (rewind_executor_hot_heap_bytes)", "{{instance}}")],
      },
      {
        title: "Hot share of activations",
        kind: "timeseries",
        unit: "percentunit",
        description: "Activations that needed no replay",
        queries: [
          q(
            'sum(rate(rewind_executor_activations_total{kind="hot"}[$__rate_interval])) / sum(rate(rewind_executor_activations_total[$__rate_interval]))',
            "hot",
          ),
        ],
      },
      {
        title: "Evictions per second",
        kind: "timeseries",
        unit: "ops",
        description: "Idle hot runs dropped, by the limit that was full",
        queries: [
          q(
            "sum by (limit) (rate(rewind_executor_evictions_total[$__rate_interval]))",
            "{{limit}}",
          ),
        ],
      },
    ],
  },
  {
    file: "quarantine",
    title: "Rewind / Quarantine",
    description: "Runs held for an operator: how many, why, and what operators did",
    panels: [
      {
        title: "In quarantine now",
        kind: "stat",
        unit: "short",
        description: "Runs waiting for an operator (rewind quarantine list)",
        queries: [q("sum(max by (epoch, reason) (rewind_quarantine_runs)) or vector(0)")],
      },
      {
        title: "In quarantine by reason",
        kind: "timeseries",
        unit: "short",
        description: "By epoch and reason",
        queries: [
          q("max by (epoch, reason) (rewind_quarantine_runs)", "epoch {{epoch}} {{reason}}"),
        ],
      },
      {
        title: "Quarantined",
        kind: "stat",
        unit: "short",
        description: "Runs quarantined in the range, by reason",
        queries: [
          q(
            "sum by (reason) (increase(rewind_quarantine_quarantined_total[$__range]))",
            "{{reason}}",
          ),
        ],
      },
      {
        title: "Released",
        kind: "stat",
        unit: "short",
        description: "Runs released for a replay in the range, by epoch",
        queries: [
          q(
            "sum by (epoch) (increase(rewind_quarantine_releases_total[$__range]))",
            "epoch {{epoch}}",
          ),
        ],
      },
      {
        title: "Given up",
        kind: "stat",
        unit: "short",
        description: "Runs an operator gave up on in the range",
        queries: [q("sum(increase(rewind_quarantine_give_ups_total[$__range]))")],
      },
      {
        title: "Divergences per second",
        kind: "timeseries",
        unit: "ops",
        description: "Replays that left their journal",
        queries: [
          q("sum(rate(rewind_executor_divergences_total[$__rate_interval]))", "divergences"),
        ],
      },
    ],
  },
  {
    file: "webhooks",
    title: "Rewind / Webhooks",
    description:
      "Webhook deliveries the projector's dispatcher sent: outcomes, latency, what waits, endpoints disabled",
    panels: [
      {
        title: "Delivery attempts",
        kind: "stat",
        unit: "short",
        description:
          "Attempts in the range, by outcome: delivered (2xx), retrying (failed, tried again later), failed (given up)",
        queries: [
          q(
            "sum by (outcome) (increase(rewind_webhook_deliveries_total[$__range]))",
            "{{outcome}}",
          ),
        ],
      },
      {
        title: "Delivery attempts per second",
        kind: "timeseries",
        unit: "ops",
        description: "By outcome",
        queries: [
          q(
            "sum by (outcome) (rate(rewind_webhook_deliveries_total[$__rate_interval]))",
            "{{outcome}}",
          ),
        ],
      },
      {
        title: "Delivery latency (p99)",
        kind: "timeseries",
        unit: "s",
        description: "From resolving the endpoint's host to the end of its answer, by outcome",
        queries: [q(p99("rewind_webhook_delivery_duration_seconds", "outcome"), "{{outcome}}")],
      },
      {
        title: "Pending deliveries",
        kind: "stat",
        unit: "short",
        description: "Deliveries not yet delivered nor given up: due now or waiting for a retry",
        queries: [q("max(rewind_webhook_pending_deliveries) or vector(0)")],
      },
      {
        title: "Endpoints disabled",
        kind: "stat",
        unit: "short",
        description:
          "Endpoints disabled in the range for failing longer than REWIND_WEBHOOK_DISABLE_AFTER",
        queries: [
          q("sum(increase(rewind_webhook_endpoints_disabled_total[$__range])) or vector(0)"),
        ],
      },
      {
        title: "Webhook sink lag",
        kind: "timeseries",
        unit: "s",
        description:
          "Age of the oldest committed entry the webhook sink has not turned into deliveries",
        queries: [q('max(rewind_projector_lag_seconds{sink="webhooks"})', "lag")],
      },
    ],
  },
  {
    file: "errors",
    title: "Rewind / Errors",
    description: "Failed runs and tool calls, API errors, fenced workers and process restarts",
    panels: [
      {
        title: "Runs failed",
        kind: "stat",
        unit: "short",
        description: "Runs that ended failed in the range",
        queries: [q('sum(increase(rewind_executor_runs_ended_total{status="failed"}[$__range]))')],
      },
      {
        title: "Tool calls failed",
        kind: "stat",
        unit: "short",
        description: "Invocations that failed (after the tool's retries) in the range, by tool",
        queries: [
          q(
            'sum by (tool) (increase(rewind_executor_tool_calls_total{outcome="error"}[$__range]))',
            "{{tool}}",
          ),
        ],
      },
      {
        title: "API errors per second",
        kind: "timeseries",
        unit: "reqps",
        description: "Responses 4xx and 5xx, by route and status",
        queries: [
          q(
            'sum by (route, status) (rate(rewind_api_requests_total{status=~"[45].."}[$__rate_interval]))',
            "{{route}} {{status}}",
          ),
        ],
      },
      {
        title: "Limits hit",
        kind: "stat",
        unit: "short",
        description:
          "Namespace limits hit in the range, by limit: starts refused (429) and runs failed with LIMIT_EXCEEDED",
        queries: [
          q("sum by (limit) (increase(rewind_limits_exceeded_total[$__range]))", "{{limit}}"),
        ],
      },
      {
        title: "Lease losses",
        kind: "stat",
        unit: "short",
        description:
          "Appends refused because another worker had taken the run (a paused or partitioned worker)",
        queries: [q("sum(increase(rewind_executor_lease_losses_total[$__range]))")],
      },
      {
        title: "Processes started",
        kind: "stat",
        unit: "short",
        description: "Rewind processes that started in the range (restarts, deployments), by job",
        queries: [
          q(
            "count by (job) (max_over_time(rewind_process_start_time_seconds[$__range]) > time() - $__range_s)",
            "{{job}}",
          ),
        ],
      },
      {
        title: "Event loop lag (p99)",
        kind: "timeseries",
        unit: "s",
        description: "Work holding a process's loop shows here first",
        queries: [q("max by (instance) (rewind_nodejs_eventloop_lag_p99_seconds)", "{{instance}}")],
      },
    ],
  },
];
