import type { MetricObjectWithValues, MetricValueWithName } from "prom-client";
import {
  ALL_DEFINITIONS,
  PROCESS_DEFINITIONS,
  type MetricDefinition,
  type Service,
} from "./definitions.js";
import { processRegistry, registry } from "./metrics.js";

export type ExpositionFormat = "text" | "openmetrics";

export const CONTENT_TYPES: Record<ExpositionFormat, string> = {
  text: "text/plain; version=0.0.4; charset=utf-8",
  openmetrics: "application/openmetrics-text; version=1.0.0; charset=utf-8",
};

/**
 * OpenMetrics (which carries exemplars) to a scraper that asks for it in its Accept header, as
 * Prometheus does; the classic text format to everyone else (curl, older scrapers).
 */
export function negotiateFormat(accept: string | undefined): ExpositionFormat {
  if (accept === undefined) return "text";
  for (const part of accept.split(",")) {
    const [type, ...params] = part.split(";").map((s) => s.trim().toLowerCase());
    if (type !== "application/openmetrics-text") continue;
    const q = params.find((p) => p.startsWith("q="));
    if (q === undefined || Number(q.slice(2)) > 0) return "openmetrics";
  }
  return "text";
}

const services = new Set<Service>();

/**
 * This process is (also) that service: /metrics serves the metrics that service serves (and the
 * process's own), so a worker's dashboard panels list workers only. A process that declares
 * nothing, like `rewind dev` with every service in it, serves every metric.
 */
export function serveAs(service: Service): void {
  services.add(service);
}

const scrapeHooks: (() => Promise<void>)[] = [];

/**
 * Runs `refresh` before each rendering of /metrics: for figures read from elsewhere at scrape
 * time (the queue backlog), so a scrape never sees one older than itself. A hook that fails or
 * takes over 5 s is skipped for that scrape; the hook itself decides what its gauge then shows.
 */
export function onScrape(refresh: () => Promise<void>): () => void {
  scrapeHooks.push(refresh);
  return () => {
    const at = scrapeHooks.indexOf(refresh);
    if (at >= 0) scrapeHooks.splice(at, 1);
  };
}

async function runHooks(): Promise<void> {
  await Promise.all(
    scrapeHooks.map((hook) =>
      Promise.race([
        hook(),
        new Promise<void>((resolve) => setTimeout(resolve, 5_000).unref()),
      ]).catch(() => {}),
    ),
  );
}

type Family = MetricObjectWithValues<MetricValueWithName<string>>;

/** This process's metrics, every one of them from the definitions, in the format asked for. */
export async function renderMetrics(format: ExpositionFormat = "text"): Promise<string> {
  await runHooks();
  const families: [MetricDefinition, Family][] = [];
  for (const definition of ALL_DEFINITIONS) {
    if (services.size > 0 && !definition.servedBy.some((service) => services.has(service)))
      continue;
    const isProcess = PROCESS_DEFINITIONS.includes(definition);
    const source = isProcess
      ? processRegistry.getSingleMetric(definition.name.slice("rewind_".length))
      : registry.getSingleMetric(definition.name);
    if (source === undefined) continue; // a collector this Node lacks
    families.push([definition, await source.get()]);
  }
  const text = families.map(([definition, family]) => renderFamily(definition, family, format));
  return format === "openmetrics" ? `${text.join("")}# EOF\n` : text.join("\n");
}

function renderFamily(definition: MetricDefinition, family: Family, format: ExpositionFormat) {
  const om = format === "openmetrics";
  // OpenMetrics names a counter's family without _total and its sample with it.
  const name =
    om && definition.type === "counter" ? definition.name.replace(/_total$/, "") : definition.name;
  const lines = [
    `# HELP ${name} ${escapeHelp(definition.help)}`,
    `# TYPE ${name} ${definition.type}`,
  ];
  if (om && definition.unit !== "") lines.push(`# UNIT ${name} ${definition.unit}`);
  for (const value of family.values) {
    const sample = value.metricName ?? family.name;
    // prom-client names a process sample without the rewind_ prefix the definition adds.
    const renamed = sample.startsWith("rewind_") ? sample : `rewind_${sample}`;
    const labels = Object.entries(value.labels).filter(([, v]) => v !== undefined);
    let line = `${renamed}${formatLabels(labels)} ${formatNumber(value.value)}`;
    const exemplar = (value as { exemplar?: Exemplar | null }).exemplar;
    if (om && exemplar?.value !== undefined && exemplar.value !== null)
      line += ` # ${formatLabels(Object.entries(exemplar.labelSet))} ${formatNumber(exemplar.value)} ${exemplar.timestamp}`;
    lines.push(line);
  }
  return `${lines.join("\n")}\n`;
}

interface Exemplar {
  labelSet: Record<string, string | number>;
  value: number | null;
  timestamp?: number;
}

function formatLabels(labels: [string, string | number | undefined][]): string {
  if (labels.length === 0) return "";
  const parts = labels.map(([key, value]) => `${key}="${escapeLabel(String(value))}"`);
  return `{${parts.join(",")}}`;
}

function formatNumber(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}
