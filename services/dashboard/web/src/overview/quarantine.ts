import {
  ApiError,
  type Api,
  type EntryLabel,
  type QuarantineAction,
  type QuarantineDetail,
  type QuarantineList,
  type QuarantineSummary,
} from "../api.js";
import { byId, el, fill, when } from "./dom.js";
import { plural } from "./overview.js";

interface Rows {
  summary: HTMLTableRowElement;
  /** What the summary shows: it is rewritten only when this changes (a button under the pointer stays put). */
  shown?: QuarantineSummary;
  shownAs?: string;
  /** The report and the actions, while expanded: kept across refreshes so a half-typed reason survives. */
  detail?: HTMLTableRowElement;
}

/**
 * The quarantined runs, one row each, refreshed in place: rows are kept by run id and only their
 * cells are rewritten, so an open report and its forms are not rebuilt under the operator.
 */
export class QuarantineTable {
  private readonly rows = new Map<string, Rows>();
  private readonly body = byId("quarantine").querySelector("tbody")!;

  constructor(
    private readonly api: Api,
    /** Called after an action, so the page refreshes at once rather than on its next tick. */
    private readonly changed: () => void,
  ) {}

  render(list: QuarantineList): void {
    const present = new Set(list.runs.map((run) => run.id));
    for (const id of [...this.rows.keys()]) if (!present.has(id)) this.rows.delete(id);
    const order: HTMLTableRowElement[] = [];
    for (const run of list.runs) {
      let rows = this.rows.get(run.id);
      if (rows === undefined) {
        rows = { summary: el("tr", { "data-run": run.id }) };
        this.rows.set(run.id, rows);
      }
      const as = JSON.stringify(run);
      if (rows.shownAs !== as) {
        // Held again after a release: the open report is of the previous quarantine.
        const stale = rows.detail !== undefined && rows.shown?.seq !== run.seq;
        rows.shown = run;
        rows.shownAs = as;
        this.fillSummary(rows, run);
        if (stale) {
          this.toggle(run.id);
          this.toggle(run.id);
        }
      }
      order.push(rows.summary);
      if (rows.detail) order.push(rows.detail);
    }
    place(this.body, order);
    byId("quarantine-empty").hidden = list.runs.length > 0;
    byId("quarantine").hidden = list.runs.length === 0; // no header over nothing
    const more = byId("quarantine-more");
    more.hidden = list.next === undefined;
    fill(
      more,
      `Only the newest ${plural(list.runs.length, "run")} are shown: \`rewind quarantine list\` pages through the rest.`,
    );
  }

  private fillSummary(rows: Rows, run: QuarantineSummary): void {
    const toggle = el("button", { class: "report-toggle" }, rows.detail ? "Hide" : "Report");
    toggle.type = "button";
    toggle.addEventListener("click", () => this.toggle(run.id));
    const pending = run.pending.map((p) =>
      el("span", { class: "tag", title: `asked by ${p.by}` }, `${p.action} pending`),
    );
    fill(
      rows.summary,
      el(
        "td",
        {},
        el("a", { class: "mono", href: `#/runs/${encodeURIComponent(run.id)}` }, run.id),
        ...pending,
      ),
      el(
        "td",
        { class: "mono", title: run.scriptHash ?? "" },
        // The file the operator knows the script by; its hash on hover.
        run.script ?? shortHash(run.scriptHash),
        " ",
        el("span", { class: "muted" }, run.toolset),
      ),
      el("td", {}, run.epoch),
      el("td", { title: run.message }, run.reason),
      el("td", {}, run.divergence ? `seq ${run.divergence.seq}` : `seq ${run.seq}`),
      el("td", {}, when(run.quarantinedAt)),
      el("td", {}, toggle),
    );
  }

  private toggle(id: string): void {
    const rows = this.rows.get(id);
    if (rows === undefined) return;
    if (rows.detail) {
      rows.detail.remove();
      delete rows.detail;
      fill(rows.summary.querySelector(".report-toggle")!, "Report");
      return;
    }
    const cell = el("td", { class: "report" }, el("p", { class: "muted" }, "Loading the report…"));
    cell.colSpan = 7;
    rows.detail = el("tr", { class: "detail", "data-report": id }, cell);
    rows.summary.after(rows.detail);
    fill(rows.summary.querySelector(".report-toggle")!, "Hide");
    this.api.quarantined(id).then(
      (detail) => fill(cell, ...report(detail), ...this.actions(id, detail)),
      (error: unknown) => fill(cell, el("p", { class: "problem" }, messageOf(error))),
    );
  }

  private actions(id: string, detail: QuarantineDetail): HTMLElement[] {
    const outcome = el("p", { class: "outcome", role: "status" });
    const epoch = el("input", {
      title: "Leave empty to replay on the run's own epoch",
      "aria-label": "epoch to release onto",
    });
    epoch.type = "number";
    epoch.min = "1";
    epoch.step = "1";
    epoch.name = "epoch";
    epoch.placeholder = `its own (${detail.run.epoch})`;
    const release = form("Release", epoch, () => {
      const text = epoch.value.trim();
      const onto = text === "" ? undefined : Number(text);
      if (onto !== undefined && !(Number.isInteger(onto) && onto >= 1))
        throw new ApiError(
          `The epoch must be a whole number, 1 or more (got ${JSON.stringify(text)})`,
          0,
          "INPUT",
        );
      return this.api.release(id, onto);
    });
    const reason = el("input", { title: "Recorded in the run's failure", "aria-label": "reason" });
    reason.type = "text";
    reason.name = "reason";
    reason.maxLength = 1000;
    reason.placeholder = "why (recorded in the run's failure)";
    const giveUp = form("Give up", reason, () =>
      this.api.giveUp(id, reason.value.trim() || undefined),
    );
    giveUp.querySelector("button")!.classList.add("danger");
    for (const f of [release, giveUp])
      f.addEventListener("done", (event) => {
        const answer = (event as CustomEvent<QuarantineAction | Error>).detail;
        const line =
          answer instanceof Error
            ? `${f.dataset.action} ${id} refused: ${messageOf(answer)}`
            : describe(id, answer);
        fill(outcome, line);
        outcome.className = answer instanceof Error ? "outcome problem" : "outcome";
        logAction(line, answer instanceof Error);
        this.changed();
      });
    return [el("h3", {}, "Release or give up"), release, giveUp, outcome];
  }
}

/** A one-field form whose button calls the API; it dispatches "done" with the answer or error. */
function form(
  label: string,
  input: HTMLInputElement,
  call: () => Promise<QuarantineAction>,
): HTMLFormElement {
  const button = el("button", {}, label);
  button.type = "submit";
  const f = el("form", { "data-action": label.toLowerCase().replace(" ", "-") }, input, button);
  f.addEventListener("submit", (event) => {
    event.preventDefault();
    button.disabled = true;
    const answer = (async () => call())();
    answer
      .then(
        (result) => f.dispatchEvent(new CustomEvent("done", { detail: result })),
        (error: unknown) =>
          f.dispatchEvent(
            new CustomEvent("done", {
              detail: error instanceof Error ? error : new Error(String(error)),
            }),
          ),
      )
      .finally(() => (button.disabled = false));
  });
  return f;
}

function report(detail: QuarantineDetail): HTMLElement[] {
  const current = detail.current;
  const parts: HTMLElement[] = [];
  if (current?.message) parts.push(el("p", {}, current.message));
  const facts: [string, string][] = [
    ["status", detail.run.status],
    ["script", [detail.run.script, detail.run.scriptHash].filter(Boolean).join(" ")],
    ["run's epoch", String(current?.runEpoch ?? detail.run.epoch)],
  ];
  if (current?.workerEpochs) facts.push(["worker's epochs", current.workerEpochs.join(", ")]);
  if (current?.worker)
    facts.push(["worker", [current.worker.owner, current.worker.build].filter(Boolean).join(", ")]);
  parts.push(
    el(
      "dl",
      {},
      ...facts.flatMap(([name, value]) => [el("dt", {}, name), el("dd", { class: "mono" }, value)]),
    ),
  );
  const divergence = current?.divergence;
  if (divergence) {
    parts.push(
      el(
        "h3",
        {},
        `Diverges at seq ${divergence.seq} (${plural(divergence.matched, "entry")} matched before)`,
      ),
      el(
        "table",
        { class: "divergence" },
        el(
          "thead",
          {},
          el("tr", {}, el("th", {}), el("th", {}, "entry"), el("th", {}, "callsite")),
        ),
        el(
          "tbody",
          {},
          side("recorded", divergence.recorded),
          side("replayed", divergence.replayed),
        ),
      ),
    );
  }
  if (detail.history.length > 0)
    parts.push(
      el("h3", {}, "History"),
      el(
        "ul",
        { class: "history" },
        ...detail.history.map((h) =>
          el(
            "li",
            {},
            `seq ${h.seq} ${h.kind} `,
            when(h.at),
            h.by ? ` by ${h.by}` : "",
            h.epoch ? ` onto epoch ${h.epoch}` : "",
            h.message ? `: ${h.message}` : "",
          ),
        ),
      ),
    );
  if (detail.report)
    parts.push(
      el(
        "details",
        {},
        el("summary", {}, "The whole report"),
        el("pre", {}, JSON.stringify(detail.report, null, 2)),
      ),
    );
  return parts;
}

function side(name: string, entry: EntryLabel | undefined): HTMLTableRowElement {
  return el(
    "tr",
    { "data-side": name },
    el("th", {}, name),
    el("td", { class: "mono" }, entry ? entry.label : "nothing (the script ended or waited here)"),
    el("td", { class: "mono" }, entry?.callsite ?? ""),
  );
}

function describe(id: string, answer: QuarantineAction): string {
  return `${answer.action} ${id}: ${answer.state}: ${answer.message} (the run is now ${answer.run.status})`;
}

function logAction(line: string, failed: boolean): void {
  const item = el(
    "li",
    { class: failed ? "failed" : "" },
    when(new Date().toISOString()),
    " ",
    line,
  );
  byId("actions").prepend(item);
  byId("actions-none").hidden = true;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function shortHash(hash: string | undefined): string {
  return hash === undefined ? "" : `${hash.slice(0, "sha256:".length + 10)}…`;
}

/** Puts the rows in this order with as few moves as possible (a moved input loses its focus). */
function place(body: HTMLTableSectionElement, order: readonly HTMLTableRowElement[]): void {
  let cursor = body.firstElementChild;
  for (const row of order) {
    if (cursor === row) cursor = cursor.nextElementSibling;
    else body.insertBefore(row, cursor);
  }
  while (cursor) {
    const next = cursor.nextElementSibling;
    cursor.remove();
    cursor = next;
  }
}
