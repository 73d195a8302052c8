/**
 * The workers' own Prometheus metrics (`rewind worker` serves /metrics when REWIND_HEALTH_PORT is
 * set): what happened inside them during a workload — commits and their duration, hot and cold
 * activations, replay time, evictions — read as differences between two scrapes.
 */

/** Every sample of a Prometheus text exposition: `name{labels}` → value. */
export type Samples = Map<string, number>;

export async function scrape(url: string): Promise<Samples> {
  const text = await (await fetch(url)).text();
  const out: Samples = new Map();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

/** Sum of every sample of `name` whose labels contain `match` (e.g. `kind="cold"`). */
export function total(samples: Samples, name: string, match = ""): number {
  let sum = 0;
  for (const [key, value] of samples) {
    const bare = key.split("{")[0];
    if (bare === name && key.includes(match)) sum += value;
  }
  return sum;
}

/** after − before for one metric (summed over labels containing `match`). */
export function delta(before: Samples, after: Samples, name: string, match = ""): number {
  return total(after, name, match) - total(before, name, match);
}

/** Mean of a histogram (seconds → ms) between two scrapes, and its count. */
export function histogramMean(
  before: Samples,
  after: Samples,
  name: string,
): { count: number; meanMs: number } {
  const count = delta(before, after, `${name}_count`);
  const sum = delta(before, after, `${name}_sum`);
  return { count, meanMs: count > 0 ? (sum / count) * 1000 : 0 };
}

/** Scrapes every worker that serves metrics: name → samples. */
export async function scrapeAll(
  workers: readonly { name: string; metricsUrl?: string }[],
): Promise<Map<string, Samples>> {
  const out = new Map<string, Samples>();
  await Promise.all(
    workers.map(async (w) => {
      if (w.metricsUrl !== undefined)
        out.set(w.name, await scrape(w.metricsUrl).catch(() => new Map()));
    }),
  );
  return out;
}

/** Sums one metric's difference over the workers scraped both times. */
export function clusterDelta(
  before: Map<string, Samples>,
  after: Map<string, Samples>,
  name: string,
  match = "",
): number {
  let sum = 0;
  for (const [worker, samples] of after)
    sum += delta(before.get(worker) ?? new Map(), samples, name, match);
  return sum;
}
