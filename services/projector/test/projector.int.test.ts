/**
 * The projector against a real Postgres: a window is delivered before its cursor moves (a sink
 * that fails gets the same window again), and the spans a backfill makes are the bytes the first
 * delivery sent, as the OTLP protobuf serializer puts them on the wire.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ExportResultCode } from "@opentelemetry/core";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JournalEntry } from "@rewind/core";
import { FolderBlobStore, SqlStore, migrate, openSqlClient } from "@rewind/store";
import { createTestDatabase } from "@rewind/store/testing";
import {
  OtelSink,
  Projector,
  backfill,
  spanIdOf,
  type Sink,
  type SinkBatch,
} from "../src/index.js";
import { startedEntry } from "./runs.js";

/** Keeps each span as the bytes OTLP/protobuf sends for it alone. */
class WireCapture implements SpanExporter {
  readonly sent: { spanId: string; bytes: string }[] = [];
  export(spans: ReadableSpan[], done: (result: { code: ExportResultCode }) => void): void {
    for (const span of spans)
      this.sent.push({
        spanId: span.spanContext().spanId,
        bytes: Buffer.from(ProtobufTraceSerializer.serializeRequest([span])!).toString("base64"),
      });
    done({ code: ExportResultCode.SUCCESS });
  }
  async shutdown(): Promise<void> {}
}

/** Fails its first delivery, then keeps what it is given. */
class FlakySink implements Sink {
  readonly name = "flaky";
  readonly batches: SinkBatch[] = [];
  private failed = false;
  async deliver(batch: SinkBatch): Promise<number> {
    if (!this.failed) {
      this.failed = true;
      throw new Error("the far side is down");
    }
    this.batches.push(batch);
    return batch.runs.length;
  }
  async close(): Promise<void> {}
}

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let store: SqlStore;
let blobDir: string;

beforeAll(async () => {
  database = await createTestDatabase("rewind_projector");
  const sql = await openSqlClient({ databaseUrl: database.url });
  await migrate(sql);
  blobDir = mkdtempSync(path.join(tmpdir(), "rewind-blobs-"));
  store = new SqlStore(sql, new FolderBlobStore(blobDir));
  await store.putScript("default", { hash: "sha256:s", entry: "s.ts", code: "x", sourceMap: "{}" });
});
afterAll(async () => {
  await store?.close();
  await database?.drop();
  if (blobDir) rmSync(blobDir, { recursive: true, force: true });
});

async function until(done: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!done()) {
    if (Date.now() > end) throw new Error(`not done within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function finishedRun(runId: string) {
  const started = startedEntry(runId);
  await store.createRun({ started, ttlMs: 60_000 });
  const lease = (await store.acquireLease(runId, "owner", 30_000))!;
  const entries: JournalEntry[][] = [
    [{ seq: 2, kind: "call", at: 1, callsite: "s.ts:2:3", name: "charge", args: {}, callId: "c" }],
    [
      { seq: 3, kind: "call.result", at: 2, callSeq: 2, result: 1 },
      { seq: 4, kind: "run.completed", at: 2, callsite: "s.ts:3:3", result: "ok" },
    ],
  ];
  let afterSeq = 1;
  for (const step of entries) {
    const outcome = await store.commit([
      {
        lease,
        afterSeq,
        entries: step,
        status: step.at(-1)!.kind === "run.completed" ? "completed" : "running",
        ...(afterSeq === 1
          ? {
              activation: { kind: "cold" as const, replayed: 1, attempt: 1, startedAt: Date.now() },
            }
          : {}),
      },
    ]);
    expect(outcome).toEqual(["ok"]);
    afterSeq = step.at(-1)!.seq;
  }
}

describe("the projector", () => {
  it("sends a window again when its sink failed, and moves the cursor only after", async () => {
    await finishedRun("run_p1");
    const flaky = new FlakySink();
    const projector = new Projector({ store, sinks: [flaky] });
    await expect(projector.step(flaky)).rejects.toThrow("the far side is down");
    expect((await store.projectionCursors()).find((c) => c.sink === "flaky")!.below).toBe(0n);
    while (await projector.step(flaky));
    const seqs = flaky.batches.flatMap((b) =>
      b.runs.flatMap((r) => r.seqs.map((s) => `${r.view.projected.runId}:${s}`)),
    );
    expect(seqs.sort()).toEqual(["run_p1:1", "run_p1:2", "run_p1:3", "run_p1:4"]);
    const cursor = (await store.projectionCursors()).find((c) => c.sink === "flaky")!;
    expect(cursor.pendingRows).toBe(0);
    expect(cursor.below).toBeGreaterThan(0n);
  });

  it("makes the same bytes for a span in a backfill as in its first delivery", async () => {
    await finishedRun("run_p2");
    const first = new WireCapture();
    const sink = new OtelSink({ exporter: first, env: {} });
    const projector = new Projector({ store, sinks: [sink] });
    while (await projector.step(sink));
    const mine = first.sent.filter((s) =>
      [spanIdOf("run_p2", "run", 0), spanIdOf("run_p2", "call", 2)].includes(s.spanId),
    );
    expect(mine).toHaveLength(2);
    const again = new WireCapture();
    const result = await backfill(store, new OtelSink({ exporter: again, env: {} }), {
      runIds: ["run_p2"],
    });
    // run.started, the cold activation, the call and the run.
    expect(result).toEqual({ runs: 1, delivered: 4 });
    const byId = new Map(first.sent.map((s) => [s.spanId, s.bytes]));
    for (const span of again.sent) expect(span.bytes).toBe(byId.get(span.spanId));
  });

  it("follows full windows at once, and waits after one that reached the horizon", async () => {
    /** Keeps the runs' seqs it is handed, and when. */
    class Clock implements Sink {
      readonly got: { at: number; seqs: string[] }[] = [];
      constructor(
        readonly name: string,
        private readonly during?: (seqs: string[]) => Promise<void>,
      ) {}
      async deliver(batch: SinkBatch): Promise<number> {
        const seqs = batch.runs.flatMap((r) => r.seqs.map((s) => `${r.view.projected.runId}:${s}`));
        await this.during?.(seqs);
        this.got.push({ at: Date.now(), seqs });
        return seqs.length;
      }
      async close(): Promise<void> {}
    }
    const mine = (sink: Clock, run: string) =>
      sink.got.flatMap((g) => g.seqs).filter((s) => s.startsWith(`${run}:`));
    // Windows of one transaction: the backlog (this run's four, and earlier tests') is read
    // window after window without waiting, though the poll is a minute.
    const eager = new Clock("cadence-full");
    await finishedRun("run_c1");
    const first = new Projector({ store, sinks: [eager], windowSize: 1, pollMs: 60_000 });
    first.start();
    await until(() => mine(eager, "run_c1").length === 4);
    await first.stop();
    // A window that read up to the horizon: the sink is caught up, and the next window waits
    // for the poll, though a run committed while the window was being delivered.
    const patient = new Clock("cadence-wait", async (seqs) => {
      if (seqs.includes("run_c2:1"))
        await store.createRun({ started: startedEntry("run_c3"), ttlMs: 60_000 });
    });
    const second = new Projector({ store, sinks: [patient], pollMs: 1_000 });
    second.start();
    await until(() => second.ready);
    await store.createRun({ started: startedEntry("run_c2"), ttlMs: 60_000 });
    await until(() => mine(patient, "run_c3").length === 1);
    const [c2, c3] = ["run_c2", "run_c3"].map(
      (run) => patient.got.find((g) => g.seqs.includes(`${run}:1`))!.at,
    );
    expect(c3! - c2!).toBeGreaterThanOrEqual(800);
    await second.stop();
  });

  it("backfills the runs committed since a time (--since), and only those", async () => {
    await finishedRun("run_s_old");
    await new Promise((resolve) => setTimeout(resolve, 50));
    const since = new Date();
    await finishedRun("run_s_new");
    const capture = new WireCapture();
    const result = await backfill(store, new OtelSink({ exporter: capture, env: {} }), { since });
    expect(result).toEqual({ runs: 1, delivered: 4 });
    const ids = new Set(capture.sent.map((s) => s.spanId));
    expect(ids.has(spanIdOf("run_s_new", "run", 0))).toBe(true);
    expect(ids.has(spanIdOf("run_s_old", "run", 0))).toBe(false);
  });

  it("keeps each run's view between windows, whole and in order, with sinks reading at once", async () => {
    /** Keeps every run's journal seqs as each delivery saw them. */
    class Keeper implements Sink {
      readonly views: number[][] = [];
      constructor(readonly name: string) {}
      async deliver(batch: SinkBatch): Promise<number> {
        for (const run of batch.runs) this.views.push(run.view.journal.map((e) => e.seq));
        return batch.runs.length;
      }
      async close(): Promise<void> {}
    }
    const sinks = [new Keeper("keeper-a"), new Keeper("keeper-b")];
    const projector = new Projector({ store, sinks, windowSize: 1 });
    // Windows of one transaction each: the runs' views grow window by window, both sinks stepping
    // at the same time over the same runs.
    await Promise.all([finishedRun("run_v1"), finishedRun("run_v2")]);
    const drain = async (sink: Sink) => {
      while (await projector.step(sink));
    };
    await Promise.all(sinks.map(drain));
    for (const sink of sinks) {
      expect(sink.views.length).toBeGreaterThan(0);
      for (const seqs of sink.views) expect(seqs).toEqual(seqs.map((_, i) => i + 1));
      // The last view of each run holds its whole journal.
      expect(sink.views.at(-1)).toEqual([1, 2, 3, 4]);
    }
  });
});
