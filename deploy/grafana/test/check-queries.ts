import { ALL_DEFINITIONS, type MetricDefinition } from "@rewind/telemetry";

/** Labels every series has from the scrape, whatever the metric. */
const TARGET_LABELS = new Set(["instance", "job"]);
/** A histogram's series, besides its name. */
const HISTOGRAM_SUFFIXES = ["_bucket", "_count", "_sum"];

/**
 * What is wrong with a dashboard query, checked against the metric definitions: every rewind_*
 * name it reads is defined (a histogram's _bucket/_count/_sum series included), and every label
 * it groups or filters by is one of that metric's labels (or a target's, or le for buckets).
 */
export function checkQuery(expr: string): string[] {
  const problems: string[] = [];
  const byName = new Map(ALL_DEFINITIONS.map((d) => [d.name, d] as const));
  const used: { series: string; definition: MetricDefinition }[] = [];
  const names = [...expr.matchAll(/\brewind_[a-z0-9_]+/g)].map((m) => m[0]);
  if (names.length === 0) problems.push("it reads no rewind_* metric");
  for (const series of names) {
    const definition = resolve(series, byName);
    if (definition === undefined) problems.push(`${series} is not in the metric definitions`);
    else used.push({ series, definition });
  }
  const allowed = new Set([...TARGET_LABELS, ...used.flatMap((u) => u.definition.labels)]);
  if (used.some((u) => u.series.endsWith("_bucket"))) allowed.add("le");
  const labels = [
    ...[...expr.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)].flatMap((m) => m[1]!.split(",")),
    ...[...expr.matchAll(/\{([^}]*)\}/g)].flatMap((m) =>
      m[1]!.split(",").map((matcher) => matcher.split(/[=!~]/)[0]!),
    ),
  ]
    .map((label) => label.trim())
    .filter((label) => label !== "");
  for (const label of labels)
    if (!allowed.has(label))
      problems.push(`label ${label} is not one of ${used.map((u) => u.series).join(", ")}'s`);
  return problems;
}

function resolve(series: string, byName: Map<string, MetricDefinition>) {
  const exact = byName.get(series);
  if (exact !== undefined) return exact;
  for (const suffix of HISTOGRAM_SUFFIXES) {
    if (!series.endsWith(suffix)) continue;
    const histogram = byName.get(series.slice(0, -suffix.length));
    if (histogram?.type === "histogram") return histogram;
  }
  return undefined;
}
