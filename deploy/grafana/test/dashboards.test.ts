import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { format } from "prettier";
import { describe, expect, it } from "vitest";
import { checkQuery } from "./check-queries.js";
import { DASHBOARDS } from "./dashboards.js";
import { renderDashboard } from "./render-dashboard.js";

const folder = fileURLToPath(new URL("..", import.meta.url));
const update = process.env.REWIND_UPDATE_DASHBOARDS === "1";

describe("the Grafana dashboards (deploy/grafana)", () => {
  it("are the JSON generated from dashboards.ts, and nothing else", async () => {
    for (const spec of DASHBOARDS) {
      const file = path.join(folder, `${spec.file}.json`);
      const dashboard = renderDashboard(spec);
      if (update) writeFileSync(file, await format(JSON.stringify(dashboard), { parser: "json" }));
      const stored: unknown = (() => {
        try {
          return JSON.parse(readFileSync(file, "utf8"));
        } catch {
          return undefined;
        }
      })();
      expect(
        stored,
        `${spec.file}.json is not what deploy/grafana/test/dashboards.ts makes: run REWIND_UPDATE_DASHBOARDS=1 npx vitest run deploy/grafana`,
      ).toEqual(dashboard);
    }
    const files = readdirSync(folder).filter((name) => name.endsWith(".json"));
    expect(files.sort()).toEqual(DASHBOARDS.map((d) => `${d.file}.json`).sort());
  });

  it("cover throughput, latency, backlog by epoch, hot cache, quarantine and errors", () => {
    expect(DASHBOARDS.map((d) => d.file)).toEqual(
      expect.arrayContaining([
        "throughput",
        "latency",
        "backlog",
        "hot-cache",
        "quarantine",
        "errors",
      ]),
    );
  });

  it("query only metrics and labels the definitions have", () => {
    const problems = DASHBOARDS.flatMap((d) =>
      d.panels.flatMap((panel) =>
        panel.queries.flatMap((query) =>
          checkQuery(query.expr).map((problem) => `${d.file} / ${panel.title}: ${problem}`),
        ),
      ),
    );
    expect(problems).toEqual([]);
  });

  it("the check finds an unknown metric, a histogram's series on a counter, and a foreign label", () => {
    expect(checkQuery("sum(rate(rewind_executor_tool_callz_total[5m]))")).toEqual([
      "rewind_executor_tool_callz_total is not in the metric definitions",
    ]);
    expect(checkQuery("rewind_executor_tool_calls_total_bucket")).toHaveLength(1);
    expect(checkQuery("sum by (run_id) (rewind_executor_tool_calls_total)")).toEqual([
      "label run_id is not one of rewind_executor_tool_calls_total's",
    ]);
    expect(checkQuery('rewind_executor_runs_ended_total{status="failed"}')).toEqual([]);
  });
});
