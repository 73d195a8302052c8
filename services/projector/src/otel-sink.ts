import { SpanKind, SpanStatusCode, TraceFlags, type HrTime } from "@opentelemetry/api";
import { ExportResultCode } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { RewindError } from "@rewind/core";
import type { ModelSpan } from "./span-model.js";
import type { Sink, SinkBatch } from "./sink.js";
import { spansOf } from "./span-model.js";

const hrTime = (us: number): HrTime => [Math.floor(us / 1e6), Math.round(us % 1e6) * 1000];

/**
 * The traces sink: the spans a batch of committed entries ends, exported over OTLP (protobuf over
 * HTTP). The exporter reads the standard variables itself: OTEL_EXPORTER_OTLP_ENDPOINT,
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TIMEOUT, …;
 * OTEL_SERVICE_NAME names the service (default `rewind`). Nothing of the process (host, pid)
 * goes into the resource: a span sent again by another projector is the same bytes.
 */
export class OtelSink implements Sink {
  readonly name = "otel";
  private readonly exporter: SpanExporter;
  private readonly resource;

  constructor(options: { exporter?: SpanExporter; env?: NodeJS.ProcessEnv } = {}) {
    const env = options.env ?? process.env;
    this.exporter = options.exporter ?? new OTLPTraceExporter();
    this.resource = resourceFromAttributes({
      "service.name": env.OTEL_SERVICE_NAME || "rewind",
    });
  }

  async deliver(batch: SinkBatch): Promise<number> {
    const spans: ModelSpan[] = [];
    for (const run of batch.runs) spans.push(...spansOf(run.view, run.seqs, run.activations));
    if (spans.length === 0) return 0;
    await this.export(spans.map((span) => this.readable(span)));
    return spans.length;
  }

  /** Exports, or throws: the cursor then stays where it was and the batch is sent again. */
  private export(spans: ReadableSpan[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.exporter.export(spans, (result) => {
        if (result.code === ExportResultCode.SUCCESS) resolve();
        else
          reject(
            new RewindError(
              "UNAVAILABLE",
              `The OTLP endpoint refused or did not take ${spans.length} spans (${result.error?.message ?? "no reason given"}): ` +
                "check OTEL_EXPORTER_OTLP_ENDPOINT and the collector; the projector sends them again",
            ),
          );
      });
    });
  }

  private readable(span: ModelSpan): ReadableSpan {
    const context = { traceId: span.traceId, spanId: span.spanId, traceFlags: TraceFlags.SAMPLED };
    const start = hrTime(span.startUs);
    const end = hrTime(span.endUs);
    return {
      name: span.name,
      kind: SpanKind.INTERNAL,
      spanContext: () => context,
      ...(span.parentSpanId !== undefined
        ? {
            parentSpanContext: {
              traceId: span.traceId,
              spanId: span.parentSpanId,
              traceFlags: TraceFlags.SAMPLED,
              isRemote: false,
            },
          }
        : {}),
      startTime: start,
      endTime: end,
      duration: hrTime(span.endUs - span.startUs),
      status:
        span.status === "error"
          ? { code: SpanStatusCode.ERROR, message: span.statusMessage ?? "" }
          : { code: SpanStatusCode.UNSET },
      attributes: span.attributes,
      links: span.links.map((link) => ({
        context: { traceId: link.traceId, spanId: link.spanId, traceFlags: TraceFlags.SAMPLED },
        attributes: link.attributes,
      })),
      events: span.events.map((event) => ({
        name: event.name,
        time: hrTime(event.timeUs),
        attributes: event.attributes,
      })),
      ended: true,
      resource: this.resource,
      instrumentationScope: { name: "@rewind/projector", version: "1" },
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
  }

  async close(): Promise<void> {
    await this.exporter.shutdown();
  }
}
