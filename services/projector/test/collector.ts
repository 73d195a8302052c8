import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
// @ts-expect-error: a plain ES module of the repository's scripts, without types
import { toolPaths } from "../../../scripts/install-tools.mjs";

/** An OTLP attribute value, as the OTLP JSON encoding writes it (64-bit integers as strings). */
export interface OtlpValue {
  stringValue?: string;
  intValue?: string;
  boolValue?: boolean;
  doubleValue?: number;
}
export interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}

/** A span in the OTLP JSON encoding (ids in hex, times in nanoseconds as strings). */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: OtlpAttribute[];
  events?: { timeUnixNano: string; name: string; attributes?: OtlpAttribute[] }[];
  links?: { traceId: string; spanId: string; attributes?: OtlpAttribute[] }[];
  status?: { code?: number | string; message?: string };
}

interface TracesData {
  resourceSpans?: { scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

/** A span attribute's value, unwrapped (integers as numbers). */
export function attribute(span: OtlpSpan, key: string): string | number | boolean | undefined {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  if (value === undefined) return undefined;
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.boolValue ?? value.doubleValue;
}

/** Whether the span's status is an error (the enum as a number or by its name). */
export const isError = (span: OtlpSpan) =>
  span.status?.code === 2 || span.status?.code === "STATUS_CODE_ERROR";

async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

/**
 * A real OpenTelemetry Collector, made by the Collector's own builder from pinned components
 * (scripts/tools.json, built by scripts/install-tools.mjs): OTLP over HTTP in, and a file
 * exporter writing every export it received as a line of OTLP JSON. The file is the backend's
 * read-back: it holds every arrival, duplicates included, so a test can count what reached the
 * backend and compare a span sent twice, which a query API that merges duplicates would hide.
 */
export class Collector {
  private child: ChildProcess | undefined;
  private dir = "";
  private output = "";
  private log = "";
  otlpUrl = "";

  async start(): Promise<void> {
    const binary = (toolPaths() as { collector: string }).collector;
    if (!existsSync(binary))
      throw new Error(
        `The OpenTelemetry Collector is not installed at ${binary}: run \`node scripts/install-tools.mjs\` (it builds it with Go)`,
      );
    const port = await freePort();
    this.otlpUrl = `http://127.0.0.1:${port}`;
    this.dir = mkdtempSync(path.join(tmpdir(), "rewind-otelcol-"));
    this.output = path.join(this.dir, "spans.jsonl");
    const config = path.join(this.dir, "config.yaml");
    writeFileSync(
      config,
      `receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${port}
exporters:
  file:
    path: ${this.output}
    flush_interval: 50ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file]
`,
    );
    this.child = spawn(binary, ["--config", config], { stdio: ["ignore", "ignore", "pipe"] });
    this.child.stderr!.on("data", (chunk: Buffer) => (this.log += chunk.toString()));
    // Self-contained (no test harness imported): the cluster benchmark starts one too.
    const deadline = Date.now() + 60_000;
    while (!this.log.includes("Everything is ready")) {
      if (this.child.exitCode !== null || Date.now() > deadline)
        throw new Error(`The Collector did not start:\n${this.log.slice(-4_000)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Every span received so far, in arrival order, with its exact JSON text. */
  private arrivals(): { span: OtlpSpan; text: string }[] {
    if (!existsSync(this.output)) return [];
    const arrivals: { span: OtlpSpan; text: string }[] = [];
    for (const line of readFileSync(this.output, "utf8").split("\n")) {
      if (line.trim() === "") continue;
      const data = JSON.parse(line) as TracesData;
      for (const resource of data.resourceSpans ?? [])
        for (const scope of resource.scopeSpans ?? [])
          for (const span of scope.spans ?? []) arrivals.push({ span, text: JSON.stringify(span) });
    }
    return arrivals;
  }

  /** The trace's spans, one per span id (the latest arrival of each); empty while it has none. */
  trace(traceId: string): OtlpSpan[] {
    const spans = new Map<string, OtlpSpan>();
    for (const { span } of this.arrivals())
      if (span.traceId === traceId) spans.set(span.spanId, span);
    return [...spans.values()];
  }

  /** Every span received, keyed by span id: one text per arrival, so a span sent twice has two. */
  received(): Map<string, string[]> {
    const received = new Map<string, string[]>();
    for (const { span, text } of this.arrivals())
      received.set(span.spanId, [...(received.get(span.spanId) ?? []), text]);
    return received;
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
