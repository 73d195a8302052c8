import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type LabelValues,
  type OpenMetricsContentType,
} from "prom-client";
import { DEFINITIONS, type MetricDefinition } from "./definitions.js";
import { traceIdOf } from "./trace-id.js";

/**
 * Rewind's metrics, one object per definition (definitions.ts), in one registry per process.
 * Metrics are a projection of what the journal says happened; none is a source of truth.
 *
 * The registry is prom-client's OpenMetrics kind only because prom-client keeps exemplars on no
 * other; it is never rendered by prom-client (exposition.ts writes both formats from the
 * definitions, so the classic text keeps its counters' _total that prom-client's OpenMetrics
 * writer strips in place).
 */
export const registry = new Registry<OpenMetricsContentType>();
registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);

/** prom-client's process and Node collectors, read at each scrape and renamed (definitions.ts). */
export const processRegistry = new Registry();
collectDefaultMetrics({ register: processRegistry });

const SLOW_SECONDS = 0.1;
const EXEMPLAR_EVERY_MS = 100;

/**
 * A histogram whose observations of a run carry that run's trace id as their exemplar, so a
 * slow bucket in Grafana links to the run's trace. The trace id is derived from the run id.
 */
export class TracedHistogram<L extends string> {
  private lastExemplarAt = -Infinity;

  constructor(readonly histogram: Histogram<L>) {}

  /**
   * With a run, the observation may carry its trace id: slow ones always (they are what a
   * link is for), others at most every 100 ms per histogram. An exemplar costs about 5 µs (it
   * is rebuilt per observation), a plain observation about 3: on every step of a hot tool call
   * that would be most of the metrics' cost.
   */
  observe(labels: LabelValues<L>, seconds: number, runId?: string): void {
    let exemplar = runId !== undefined && seconds >= SLOW_SECONDS;
    if (runId !== undefined && !exemplar) {
      const now = performance.now();
      if (now - this.lastExemplarAt >= EXEMPLAR_EVERY_MS) {
        this.lastExemplarAt = now;
        exemplar = true;
      }
    }
    if (exemplar)
      this.histogram.observe({
        labels,
        value: seconds,
        exemplarLabels: { trace_id: traceIdOf(runId!) } as LabelValues<L>,
      });
    // prom-client's exemplar-enabled histogram takes only this form; no exemplar labels: none kept.
    else this.histogram.observe({ labels, value: seconds });
  }

  /** Makes the series of these labels exist, at 0 (see zeroWorkerSeries in the worker). */
  zero(labels: LabelValues<L>): void {
    this.histogram.zero(labels);
  }

  /** Starts timing; the returned function observes the seconds elapsed. */
  startTimer(labels: LabelValues<L>, runId?: string): () => number {
    const started = performance.now();
    return () => {
      const seconds = (performance.now() - started) / 1000;
      this.observe(labels, seconds, runId);
      return seconds;
    };
  }
}

type LabelsOf<D> = D extends { labels: readonly (infer L extends string)[] } ? L : never;
type Built<D> = D extends { type: "counter" }
  ? Counter<LabelsOf<D>>
  : D extends { type: "gauge" }
    ? Gauge<LabelsOf<D>>
    : TracedHistogram<LabelsOf<D>>;
export type Metrics = { [K in keyof typeof DEFINITIONS]: Built<(typeof DEFINITIONS)[K]> };

function build(definition: MetricDefinition): unknown {
  const common = {
    name: definition.name,
    help: definition.help,
    labelNames: definition.labels,
    registers: [registry],
  };
  switch (definition.type) {
    case "counter":
      return new Counter(common);
    case "gauge":
      return new Gauge(common);
    case "histogram":
      return new TracedHistogram(
        new Histogram({
          ...common,
          buckets: [...(definition.buckets ?? [])],
          enableExemplars: true,
        }),
      );
  }
}

export const metrics = Object.fromEntries(
  Object.entries(DEFINITIONS).map(([key, definition]) => [key, build(definition)]),
) as Metrics;
