/** Small statistics and formatting helpers for the benchmarks. */

export interface Summary {
  n: number;
  min: number;
  median: number;
  p99: number;
  max: number;
  mean: number;
}

export function summarize(samples: ArrayLike<number>): Summary {
  const sorted = Float64Array.from(samples).sort();
  const n = sorted.length;
  const at = (q: number) => sorted[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))]!;
  let sum = 0;
  for (const x of sorted) sum += x;
  return { n, min: sorted[0]!, median: at(0.5), p99: at(0.99), max: sorted[n - 1]!, mean: sum / n };
}

/** Nanoseconds elapsed since `t0` (from `now()`). */
export const now = (): bigint => process.hrtime.bigint();
export const since = (t0: bigint): number => Number(process.hrtime.bigint() - t0);

export const us = (ns: number): string => `${(ns / 1e3).toFixed(1)} µs`;
export const ms = (ns: number): string => `${(ns / 1e6).toFixed(2)} ms`;
export const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`;
export const int = (x: number): string => Math.round(x).toLocaleString("en-US");

export function line(label: string, s: Summary, fmt: (x: number) => string): string {
  return (
    `  ${label.padEnd(34)} median ${fmt(s.median)}  p99 ${fmt(s.p99)}  ` +
    `mean ${fmt(s.mean)}  min ${fmt(s.min)}  max ${fmt(s.max)}  (n=${s.n})`
  );
}

/** Collects target checks and prints the final table. */
export class Report {
  private readonly rows: { figure: string; value: string; target: string; ok?: boolean }[] = [];

  check(figure: string, value: string, target: string, ok: boolean): void {
    this.rows.push({ figure, value, target, ok });
    console.log(`  => ${figure}: ${value} (target ${target}) ${ok ? "PASS" : "FAIL"}`);
  }

  info(figure: string, value: string): void {
    this.rows.push({ figure, value, target: "—" });
  }

  get failed(): number {
    return this.rows.filter((r) => r.ok === false).length;
  }

  print(): void {
    const w = [50, 24, 18];
    const row = (a: string, b: string, c: string, d: string) =>
      `${a.padEnd(w[0]!)} ${b.padStart(w[1]!)}  ${c.padEnd(w[2]!)} ${d}`;
    console.log(`\n${row("Figure", "Measured", "Target", "Result")}`);
    console.log("-".repeat(w[0]! + w[1]! + w[2]! + 12));
    // By figure number (the label's prefix); sort is stable, so rows keep their order within one.
    const rows = [...this.rows].sort((a, b) => parseInt(a.figure) - parseInt(b.figure));
    for (const r of rows) {
      const verdict = r.ok === undefined ? "info" : r.ok ? "PASS" : "FAIL";
      console.log(row(r.figure, r.value, r.target, verdict));
    }
  }
}
