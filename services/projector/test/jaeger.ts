import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
// @ts-expect-error: a plain ES module of the repository's scripts, without types
import { toolPaths } from "../../../scripts/install-tools.mjs";
import { freePort, until } from "../../worker/test/cluster-harness.js";

/** A span as Jaeger's query API answers it. */
export interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: { refType: "CHILD_OF" | "FOLLOWS_FROM"; traceID: string; spanID: string }[];
  tags: { key: string; type: string; value: unknown }[];
  logs: { timestamp: number; fields: { key: string; value: unknown }[] }[];
  startTime: number;
  duration: number;
}

/**
 * A real Jaeger (v2, an OpenTelemetry Collector inside) built from its Go module by
 * scripts/install-tools.mjs: OTLP over HTTP in, memory storage, the query API out, and the
 * collector's debug exporter printing every span it received to stderr, duplicates included, so
 * a test can count what arrived and compare a span sent twice (the query API may merge them).
 */
export class Jaeger {
  private child: ChildProcess | undefined;
  private dir = "";
  private stderr = "";
  otlpUrl = "";
  queryUrl = "";

  async start(): Promise<void> {
    const binary = (toolPaths() as { jaeger: string }).jaeger;
    if (!existsSync(binary))
      throw new Error(
        `Jaeger is not installed at ${binary}: run \`node scripts/install-tools.mjs\` (it builds it with Go)`,
      );
    const [otlp, query, grpc] = [await freePort(), await freePort(), await freePort()];
    this.otlpUrl = `http://127.0.0.1:${otlp}`;
    this.queryUrl = `http://127.0.0.1:${query}`;
    this.dir = mkdtempSync(path.join(tmpdir(), "rewind-jaeger-"));
    const config = path.join(this.dir, "config.yaml");
    writeFileSync(
      config,
      `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter, debug]
  telemetry:
    metrics:
      level: none
    logs:
      level: info
      encoding: console
extensions:
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:${query}
    grpc:
      endpoint: 127.0.0.1:${grpc}
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${otlp}
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
  debug:
    verbosity: detailed
`,
    );
    this.child = spawn(binary, ["--config", config], { stdio: ["ignore", "ignore", "pipe"] });
    this.child.stderr!.on("data", (chunk: Buffer) => (this.stderr += chunk.toString()));
    await until(
      "Jaeger's query API to answer",
      async () => (await fetch(`${this.queryUrl}/api/services`)).ok || undefined,
      60_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${this.stderr.slice(-4_000)}`);
    });
  }

  /** The trace's spans as the query API answers them (empty while it has none). */
  async trace(traceId: string): Promise<JaegerSpan[]> {
    const response = await fetch(`${this.queryUrl}/api/traces/${traceId}`);
    if (response.status === 404) return [];
    const body = (await response.json()) as { data?: { spans: JaegerSpan[] }[] };
    return body.data?.[0]?.spans ?? [];
  }

  /**
   * Every span the collector received, as the debug exporter printed it, keyed by span id: one
   * text per arrival, so a span sent twice has two.
   */
  received(): Map<string, string[]> {
    const arrivals = new Map<string, string[]>();
    const blocks = this.stderr.split(/^Span #\d+\s*$/m).slice(1);
    for (const block of blocks) {
      // A block ends where the next resource, scope or log line starts.
      const lines: string[] = [];
      for (const line of block.split("\n")) {
        if (/^(ResourceSpans|ScopeSpans) #|^\d{4}-\d\d-\d\dT/.test(line)) break;
        lines.push(line.trimEnd());
      }
      const id = /^\s*ID\s*: ([0-9a-f]{16})$/m.exec(lines.join("\n"))?.[1];
      if (id === undefined) continue;
      const text = lines.join("\n").trim();
      arrivals.set(id, [...(arrivals.get(id) ?? []), text]);
    }
    return arrivals;
  }

  async stop(): Promise<void> {
    if (this.child !== undefined && this.child.exitCode === null) {
      const exited = new Promise((resolve) => this.child!.once("exit", resolve));
      this.child.kill("SIGKILL");
      await exited;
    }
    if (this.dir !== "") rmSync(this.dir, { recursive: true, force: true });
  }
}
