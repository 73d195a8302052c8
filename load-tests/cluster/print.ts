/** Formatting for the cluster figures (times in ms, rates per second). */
import { percentile } from "../durable/stats.js";
import { int } from "../sandbox/stats.js";

export const fmtMs = (x: number): string =>
  x >= 100 ? `${x.toFixed(0)} ms` : `${x.toFixed(1)} ms`;
export const rate = (x: number, unit: string): string => `${int(x)} ${unit}/s`;
export const gib = (bytes: number): string => `${(bytes / 2 ** 30).toFixed(2)} GiB`;
export const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

/** "p50 … p90 … p99 … max …" of samples in ms. */
export function spread(samples: ArrayLike<number>): string {
  if (samples.length === 0) return "(no samples)";
  const at = (q: number) => fmtMs(percentile(samples, q));
  return `p50 ${at(0.5)}, p90 ${at(0.9)}, p99 ${at(0.99)}, max ${at(1)} (n=${samples.length})`;
}

export { percentile };
