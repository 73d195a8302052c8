import type { DashboardSpec } from "./dashboards.js";

/** Grafana's dashboard JSON (schema 39) for a spec: a datasource variable, panels in a grid. */
export function renderDashboard(spec: DashboardSpec): unknown {
  const datasource = { type: "prometheus", uid: "${datasource}" };
  let x = 0;
  let y = 0;
  const panels = spec.panels.map((panel, index) => {
    const width = panel.kind === "stat" ? 8 : 12;
    const height = panel.kind === "stat" ? 5 : 8;
    if (x + width > 24) {
      x = 0;
      y += 8;
    }
    const gridPos = { x, y, w: width, h: height };
    x += width;
    return {
      id: index + 1,
      type: panel.kind,
      title: panel.title,
      description: panel.description,
      datasource,
      gridPos,
      fieldConfig: { defaults: { unit: panel.unit }, overrides: [] },
      options:
        panel.kind === "stat"
          ? {
              reduceOptions: { calcs: ["lastNotNull"], fields: "", values: false },
              textMode: "value_and_name",
            }
          : { legend: { displayMode: "list", placement: "bottom", showLegend: true } },
      targets: panel.queries.map((query, i) => ({
        refId: String.fromCharCode(65 + i),
        datasource,
        expr: query.expr,
        ...(query.legend === undefined ? {} : { legendFormat: query.legend }),
        ...(panel.kind === "stat" ? { instant: true, range: false } : { range: true }),
      })),
    };
  });
  return {
    uid: `rewind-${spec.file}`,
    title: spec.title,
    description: spec.description,
    tags: ["rewind"],
    editable: false,
    schemaVersion: 39,
    time: { from: "now-6h", to: "now" },
    refresh: "30s",
    templating: {
      list: [
        {
          name: "datasource",
          label: "Prometheus",
          type: "datasource",
          query: "prometheus",
          current: {},
          hide: 0,
        },
      ],
    },
    panels,
  };
}
