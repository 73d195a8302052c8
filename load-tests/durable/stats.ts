/** Percentiles beyond ../sandbox/stats.ts's summary (p90, as the figures quote it). */
export function percentile(samples: ArrayLike<number>, q: number): number {
  const sorted = Float64Array.from(samples).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}×`;

/** Intervals between consecutive timestamps (ns). */
export function intervals(stamps: readonly bigint[]): Float64Array {
  const out = new Float64Array(Math.max(0, stamps.length - 1));
  for (let i = 1; i < stamps.length; i++) out[i - 1] = Number(stamps[i]! - stamps[i - 1]!);
  return out;
}
