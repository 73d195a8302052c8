/**
 * A real Prometheus (Debian's prometheus package) for the metrics test: it scrapes the targets it
 * is given every 500 ms from a file it re-reads on reload, keeps exemplars, and answers PromQL.
 * Its data lives in a temporary folder removed on stop.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort, until } from "./cluster-harness.js";

export const PROMETHEUS = process.env.PROMETHEUS_PATH ?? "/usr/bin/prometheus";
export const PROMTOOL = process.env.PROMTOOL_PATH ?? "/usr/bin/promtool";
export const SCRAPE_SECONDS = 0.5;

export interface Sample {
  metric: Record<string, string>;
  value?: [number, string];
  values?: [number, string][];
}

export class Prometheus {
  url = "";
  private child: ChildProcess | undefined;
  private log = "";
  private readonly dir = mkdtempSync(path.join(tmpdir(), "rewind-prometheus-"));
  private readonly targets = new Map<string, Set<string>>();

  /**
   * `bearerToken`: sent with every scrape, as a deployment's ServiceMonitor does (the API's
   * /metrics needs a token with the metrics scope; the health ports ignore it).
   */
  async start(options: { bearerToken?: string } = {}): Promise<void> {
    const port = await freePort();
    this.url = `http://127.0.0.1:${port}`;
    this.writeTargets();
    writeFileSync(
      path.join(this.dir, "prometheus.yml"),
      [
        "global:",
        `  scrape_interval: ${SCRAPE_SECONDS * 1000}ms`,
        `  scrape_timeout: ${SCRAPE_SECONDS * 1000}ms`,
        "scrape_configs:",
        "  - job_name: rewind",
        ...(options.bearerToken === undefined
          ? []
          : [
              "    authorization:",
              "      type: Bearer",
              `      credentials: ${JSON.stringify(options.bearerToken)}`,
            ]),
        "    file_sd_configs:",
        `      - files: [${JSON.stringify(path.join(this.dir, "targets.json"))}]`,
        "",
      ].join("\n"),
    );
    this.child = spawn(
      PROMETHEUS,
      [
        `--config.file=${path.join(this.dir, "prometheus.yml")}`,
        `--storage.tsdb.path=${path.join(this.dir, "data")}`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--web.enable-lifecycle",
        "--enable-feature=exemplar-storage",
        "--log.level=warn",
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    this.child.stderr!.on("data", (chunk: Buffer) => {
      this.log = (this.log + chunk.toString()).slice(-10_000);
    });
    await until(
      "Prometheus to be ready",
      async () => (await fetch(`${this.url}/-/ready`)).ok || undefined,
      30_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${this.log}`);
    });
  }

  /** Scrapes `url`'s /metrics from now on, as job `job` (api, worker, quarantine). */
  async scrape(job: string, url: string): Promise<void> {
    const set = this.targets.get(job) ?? new Set();
    this.targets.set(job, set.add(new URL(url).host));
    this.writeTargets();
    await fetch(`${this.url}/-/reload`, { method: "POST" });
  }

  /** Stops scraping `url` (its process is gone, as a deployment's discovery would tell). */
  async forget(job: string, url: string): Promise<void> {
    this.targets.get(job)?.delete(new URL(url).host);
    this.writeTargets();
    await fetch(`${this.url}/-/reload`, { method: "POST" });
  }

  /** Waits until every live target has been scraped, successfully, after `since` (ms). */
  async scrapedAfter(since: number, hosts?: readonly string[]): Promise<void> {
    await until(
      "every target to be scraped",
      async () => {
        const body = (await (await fetch(`${this.url}/api/v1/targets?state=active`)).json()) as {
          data: {
            activeTargets: {
              labels: { instance: string };
              health: string;
              lastScrape: string;
              lastError: string;
            }[];
          };
        };
        const targets = body.data.activeTargets.filter(
          (t) => hosts === undefined || hosts.includes(t.labels.instance),
        );
        const wanted = hosts?.length ?? [...this.targets.values()].reduce((n, s) => n + s.size, 0);
        return (
          targets.length === wanted &&
          targets.every((t) => t.health === "up" && Date.parse(t.lastScrape) > since)
        );
      },
      15_000,
    );
  }

  async targetErrors(): Promise<string[]> {
    const body = (await (await fetch(`${this.url}/api/v1/targets?state=active`)).json()) as {
      data: { activeTargets: { scrapeUrl: string; lastError: string }[] };
    };
    return body.data.activeTargets
      .filter((t) => t.lastError !== "")
      .map((t) => `${t.scrapeUrl}: ${t.lastError}`);
  }

  /** An instant query at `time` (s). */
  async query(expr: string, time: number): Promise<Sample[]> {
    return this.api("query", { query: expr, time: String(time) });
  }

  async queryRange(expr: string, start: number, end: number, step: number): Promise<Sample[]> {
    return this.api("query_range", {
      query: expr,
      start: String(start),
      end: String(end),
      step: String(step),
    });
  }

  async exemplars(expr: string, start: number, end: number) {
    const response = await fetch(
      `${this.url}/api/v1/query_exemplars?${new URLSearchParams({ query: expr, start: String(start), end: String(end) }).toString()}`,
    );
    const body = (await response.json()) as {
      data: {
        seriesLabels: Record<string, string>;
        exemplars: { labels: Record<string, string>; value: string }[];
      }[];
    };
    return body.data;
  }

  async stop(): Promise<void> {
    if (this.child !== undefined && this.child.exitCode === null) {
      const exited = new Promise((resolve) => this.child!.once("exit", resolve));
      this.child.kill("SIGKILL");
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async api(kind: string, params: Record<string, string>): Promise<Sample[]> {
    const response = await fetch(
      `${this.url}/api/v1/${kind}?${new URLSearchParams(params).toString()}`,
    );
    const body = (await response.json()) as {
      status: string;
      error?: string;
      data?: { result: Sample[] };
    };
    if (body.status !== "success")
      throw new Error(`Prometheus refused ${params.query}: ${body.error ?? response.status}`);
    return body.data!.result;
  }

  private writeTargets(): void {
    const groups = [...this.targets].map(([job, hosts]) => ({
      targets: [...hosts],
      labels: { job },
    }));
    writeFileSync(path.join(this.dir, "targets.json"), JSON.stringify(groups));
  }
}

/** Prometheus's linter on one /metrics text: its complaints, or "" when it has none. */
export function promtoolCheck(text: string): string {
  const result = spawnSync(PROMTOOL, ["check", "metrics"], { input: text, encoding: "utf8" });
  if (result.error !== undefined)
    throw new Error(
      `promtool could not be run (${result.error.message}): install Debian's prometheus package, as .ci/run does`,
    );
  return (
    `${result.stdout}${result.stderr}`.trim() +
    (result.status === 0 ? "" : ` (exit ${result.status})`)
  );
}
