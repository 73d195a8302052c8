/**
 * A run started by a request that carried a W3C traceparent lives in that request's trace: the
 * projector exports its spans there, so the exemplars and log lines the workers make about it must
 * name the same trace id, not the one derived from the run id (issue 14).
 */
import { describe, expect, it } from "vitest";
import { defineToolset } from "@rewind/core";
import { Executor } from "@rewind/executor";
import { Sandbox, compileScript } from "@rewind/sandbox";
import type { Store } from "@rewind/store";
import { derivedTraceId, renderMetrics, runFields, traceIdOf } from "@rewind/telemetry";
import { createRun, until, useTestStore } from "./harness.js";

let store: Store;
useTestStore("trace", (made) => (store = made));

const REQUEST_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const TRACEPARENT = `00-${REQUEST_TRACE}-00f067aa0ba902b7-01`;

/** The trace ids on the tool-call histogram's exemplars, in OpenMetrics. */
async function toolCallExemplars(): Promise<Set<string>> {
  const text = await renderMetrics("openmetrics");
  const ids = [
    ...text.matchAll(
      /^rewind_executor_tool_call_duration_seconds_bucket.*# \{trace_id="([0-9a-f]{32})"\}/gm,
    ),
  ];
  return new Set(ids.map((match) => match[1]!));
}

describe("a run's trace in what the workers observe", () => {
  it("names its start request's trace while hot, and forgets it when the run leaves", async () => {
    const sandbox = new Sandbox();
    const ended = new Set<string>();
    // Slower than the exemplars' threshold (0.1 s): each call's observation carries one.
    const toolset = defineToolset("trace", {
      slow: async () => {
        await new Promise((resolve) => setTimeout(resolve, 150));
        return "done";
      },
    });
    const exec = new Executor({
      store,
      sandbox,
      toolsets: new Map([["trace", toolset]]),
      owner: "trace-1",
      onEnded: (id) => ended.add(id),
    });
    try {
      const script = await compileScript({
        source: `import { tools } from "rewind";\nexport default async () => tools.slow({});`,
        filename: "trace.ts",
      });
      const traced = await createRun(store, script, {
        toolset: "trace",
        epoch: 2,
        traceparent: TRACEPARENT,
      });
      expect((await store.getRun(traced))?.traceparent).toBe(TRACEPARENT);
      await exec.activate(traced);
      // While the run is in this process, a log line about it names the request's trace.
      await until(() => runFields(traced).traceId === REQUEST_TRACE, 10_000, "the run loaded");
      await until(() => ended.has(traced), 30_000, "the traced run to end");
      expect(await toolCallExemplars()).toContain(REQUEST_TRACE);
      // Ended, it left memory: without its traceparent at hand, the derived id again.
      expect(traceIdOf(traced)).toBe(derivedTraceId(traced));
      expect(runFields(traced, 2, TRACEPARENT).traceId).toBe(REQUEST_TRACE);

      const plain = await createRun(store, script, { toolset: "trace", epoch: 2 });
      await exec.activate(plain);
      await until(() => ended.has(plain), 30_000, "the plain run to end");
      expect(await toolCallExemplars()).toContain(derivedTraceId(plain));
    } finally {
      await exec.close();
      sandbox.dispose();
    }
  }, 60_000);
});
