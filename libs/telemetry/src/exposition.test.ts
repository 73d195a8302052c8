import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ALL_DEFINITIONS, DEFINITIONS } from "./definitions.js";
import { negotiateFormat, onScrape, renderMetrics } from "./exposition.js";
import { metrics } from "./metrics.js";
import { traceIdOf } from "./trace-id.js";

/** Prometheus's own linter, from Debian's prometheus package (.ci/run installs it). */
function promtool(text: string): { status: number | null; output: string } {
  const result = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
  if (result.error !== undefined)
    throw new Error(
      `promtool could not be run (${result.error.message}): install Debian's prometheus package (apt-get install -y --no-install-recommends prometheus), as .ci/run does`,
    );
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

function observeSome(): void {
  const labels = { toolset: "shop", tool: "charge", outcome: "ok" };
  metrics.toolCalls.inc(labels);
  metrics.toolSeconds.observe(labels, 0.02, "run_exemplar");
  metrics.activationSeconds.observe({ kind: "hot" }, 0.001);
  metrics.hotRuns.set(3);
}

describe("the metric definitions", () => {
  it("follow Prometheus's naming: rewind_ prefix, _total on counters only, the unit last", () => {
    for (const { name, type, unit, labels } of ALL_DEFINITIONS) {
      expect(name).toMatch(/^rewind_[a-z]+_[a-z0-9_]+$/);
      expect(name.startsWith("rewind_process_process_")).toBe(false);
      if (type === "counter") expect(name).toMatch(/_total$/);
      else expect(name).not.toMatch(/_total$/);
      const stem = name.replace(/_total$/, "");
      if (unit !== "") expect(stem.endsWith(`_${unit}`)).toBe(true);
      // An unbounded label is a series per run: the run is an exemplar's, never a label.
      for (const label of labels) expect(label).not.toMatch(/run|trace|call_?id/i);
    }
    expect(new Set(ALL_DEFINITIONS.map((d) => d.name)).size).toBe(ALL_DEFINITIONS.length);
  });
});

describe("/metrics", () => {
  it("serves every definition, and promtool check metrics accepts the classic text", async () => {
    observeSome();
    const text = await renderMetrics("text");
    for (const { name } of ALL_DEFINITIONS) expect(text).toContain(`# TYPE ${name} `);
    expect(text).not.toMatch(/^rewind_process_process_/m);
    expect(text).toContain(
      'rewind_executor_tool_calls_total{toolset="shop",tool="charge",outcome="ok"} 1',
    );
    expect(text).not.toContain("trace_id"); // exemplars are OpenMetrics only
    const lint = promtool(text);
    expect(lint.output).toBe("");
    expect(lint.status).toBe(0);
  });

  it("promtool rejects what the old names were: the check can fail", () => {
    const lint = promtool(
      "# HELP nodejs_active_handles_total Handles\n# TYPE nodejs_active_handles_total gauge\nnodejs_active_handles_total 3\n",
    );
    expect(lint.status).not.toBe(0);
    expect(lint.output).toMatch(/should not have "_total" suffix/);
  });

  it("in OpenMetrics, carries the run's trace id as a histogram's exemplar and ends with # EOF", async () => {
    observeSome();
    const text = await renderMetrics("openmetrics");
    const bucket = text
      .split("\n")
      .find((line) =>
        line.startsWith('rewind_executor_tool_call_duration_seconds_bucket{le="0.05"'),
      );
    expect(bucket).toMatch(
      new RegExp(`# \\{trace_id="${traceIdOf("run_exemplar")}"\\} 0\\.02 \\d+(\\.\\d+)?$`),
    );
    // A counter's family is named without _total, its sample with it.
    expect(text).toContain("# TYPE rewind_executor_tool_calls counter");
    expect(text).toMatch(/^rewind_executor_tool_calls_total\{/m);
    expect(text).toContain("# UNIT rewind_executor_tool_call_duration_seconds seconds");
    expect(text.endsWith("# EOF\n")).toBe(true);
  });

  it("is OpenMetrics to a scraper that asks for it (as Prometheus does), classic text otherwise", () => {
    const prometheus =
      "application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2";
    expect(negotiateFormat(prometheus)).toBe("openmetrics");
    expect(negotiateFormat("text/plain;version=0.0.4")).toBe("text");
    expect(negotiateFormat("application/openmetrics-text;q=0")).toBe("text");
    expect(negotiateFormat(undefined)).toBe("text");
    expect(negotiateFormat("*/*")).toBe("text");
  });

  it("reads scrape-time gauges at each scrape, and a failing hook fails no scrape", async () => {
    let backlog = 4;
    const stopGood = onScrape(async () => metrics.queueBacklog.set({ epoch: "1" }, backlog));
    const stopBad = onScrape(() => Promise.reject(new Error("Redis is down")));
    try {
      expect(await renderMetrics()).toContain('rewind_queue_backlog{epoch="1"} 4');
      backlog = 9;
      expect(await renderMetrics()).toContain('rewind_queue_backlog{epoch="1"} 9');
    } finally {
      stopGood();
      stopBad();
    }
  });

  it("names the trace of a run by its id alone", () => {
    expect(traceIdOf("run_a")).toMatch(/^[0-9a-f]{32}$/);
    expect(traceIdOf("run_a")).toBe(traceIdOf("run_a"));
    expect(traceIdOf("run_a")).not.toBe(traceIdOf("run_b"));
    expect(Object.keys(DEFINITIONS)).toContain("queueBacklog");
  });
});
