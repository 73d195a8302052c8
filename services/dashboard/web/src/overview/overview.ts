import type { EpochList, EpochView } from "../api.js";
import { byId, el, fill } from "./dom.js";

/** The statuses of a run that has not ended, in the order a run goes through them. */
const OPEN_STATUSES = ["queued", "running", "waiting", "quarantined"];

/** Open runs by status, summed over the epochs (GET /v1/epochs counts them per epoch). */
export function renderStatuses(list: EpochList): void {
  const totals = new Map<string, number>(OPEN_STATUSES.map((status) => [status, 0]));
  for (const epoch of list.epochs)
    for (const [status, runs] of Object.entries(epoch.runs.byStatus))
      totals.set(status, (totals.get(status) ?? 0) + runs);
  fill(
    byId("statuses"),
    ...[...totals].map(([status, runs]) =>
      el(
        "div",
        // Quarantined runs stand out only when there are some.
        { class: runs > 0 ? `tile ${status}` : "tile", "data-status": status },
        el("span", { class: "count" }, runs),
        el("span", { class: "label" }, status),
      ),
    ),
  );
}

/** One row per epoch, with its live workers; an epoch whose runs wait for one is highlighted. */
export function renderEpochs(list: EpochList): void {
  const stranded = list.epochs.filter((epoch) => epoch.waiting > 0);
  const warning = byId("epochs-waiting");
  warning.hidden = stranded.length === 0;
  fill(
    warning,
    stranded
      .map(
        (e) =>
          `${plural(e.waiting, "run")} ${e.waiting === 1 ? "waits" : "wait"} for a worker of epoch ${e.epoch}`,
      )
      .join("; "),
    stranded.length > 0
      ? ": no live worker runs it; they go on once a worker whose build supports it starts."
      : "",
  );
  const body = byId("epochs").querySelector("tbody")!;
  fill(body, ...list.epochs.map(epochRow));
}

function epochRow(epoch: EpochView): HTMLTableRowElement {
  const stuck = epoch.waiting > 0;
  const byStatus = Object.entries(epoch.runs.byStatus)
    .map(([status, runs]) => `${status} ${runs}`)
    .join(" · ");
  return el(
    "tr",
    { class: stuck ? "unsupported" : "", "data-epoch": String(epoch.epoch) },
    el(
      "td",
      {},
      el("strong", {}, epoch.epoch),
      " ",
      epoch.current && el("span", { class: "tag" }, "current"),
    ),
    el("td", {}, support(epoch)),
    el(
      "td",
      { class: "muted" },
      epoch.environment
        ? `V8 ${epoch.environment.v8}, isolated-vm ${epoch.environment.isolatedVm}`
        : "unknown to this build",
      epoch.released ? ` · released ${epoch.released}` : "",
    ),
    el("td", { "data-workers": String(epoch.workers) }, epoch.workers),
    el("td", { "data-open": String(epoch.runs.open) }, epoch.runs.open),
    el(
      "td",
      {},
      byStatus || "none",
      stuck && el("div", { class: "waiting" }, `waiting for a worker of epoch ${epoch.epoch}`),
    ),
  );
}

function support(epoch: EpochView): HTMLElement {
  if (epoch.supported) return el("span", { class: "tag" }, "supported");
  return el("span", { class: "tag no" }, epoch.known ? "not supported" : "unknown epoch");
}

export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
