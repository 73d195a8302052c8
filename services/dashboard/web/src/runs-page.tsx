import { useState } from "preact/hooks";
import type { Api, RunStatus } from "./api.js";
import { field, localTime } from "./format.js";
import { runHref, runsHref } from "./route.js";
import { usePoll } from "./use-poll.js";

const STATUSES: RunStatus[] = [
  "queued",
  "running",
  "waiting",
  "quarantined",
  "completed",
  "failed",
  "cancelled",
];
/** The filters the form edits: each is a query parameter of GET /v1/runs. */
const FILTERS = [
  "status",
  "script",
  "toolset",
  "epoch",
  "createdFrom",
  "createdTo",
  "fork",
  "parent",
  "q",
  "order",
];
const PAGE = 25;

/**
 * Every run of the namespace: the API's filters as a form (kept in the address, so a view can be
 * shared), counts by status over all pages, paged with the API's cursor, refreshed every 2 s.
 */
export function RunsPage({
  api,
  query,
  refused,
}: {
  api: Api;
  query: URLSearchParams;
  refused: (m: string) => void;
}) {
  const filters = new URLSearchParams(
    [...query].filter(([key, value]) => FILTERS.includes(key) && value !== ""),
  );
  const key = filters.toString();
  /** The cursors of the pages before this one: Back pops one. */
  const [cursors, setCursors] = useState<string[]>([]);
  const [cursorsOf, setCursorsOf] = useState(key);
  if (cursorsOf !== key) {
    setCursorsOf(key);
    setCursors([]);
  }
  const cursor = cursorsOf === key ? cursors[cursors.length - 1] : undefined;
  const oldest = filters.get("order") === "oldest";
  const list = usePoll(
    () => {
      const ask = new URLSearchParams(filters);
      // Times from the form are the operator's local time: sent as instants.
      for (const name of ["createdFrom", "createdTo"]) {
        const value = ask.get(name);
        if (value) ask.set(name, new Date(value).toISOString());
      }
      ask.set("limit", String(PAGE));
      ask.set("counts", "true");
      if (cursor !== undefined) ask.set(oldest ? "after" : "before", cursor);
      return api.runs(ask);
    },
    [key, cursor],
    refused,
  );

  function apply(event: Event) {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    const next = new URLSearchParams();
    for (const name of FILTERS) {
      const value = field(data, name).trim();
      if (value !== "") next.set(name, value);
    }
    location.hash = runsHref(next);
  }
  const withStatus = (status: string | undefined) => {
    const next = new URLSearchParams(filters);
    if (status === undefined) next.delete("status");
    else next.set("status", status);
    return runsHref(next);
  };
  const counts = list.data?.counts ?? {};
  const total = Object.values(counts).reduce((sum, n) => sum + (n ?? 0), 0);
  return (
    <div class="runs-page">
      <nav class="counts" aria-label="Runs by status">
        <a href={withStatus(undefined)} aria-current={filters.has("status") ? undefined : "true"}>
          all <strong data-count="all">{total}</strong>
        </a>
        {STATUSES.map((status) => (
          <a
            key={status}
            href={withStatus(status)}
            class={`count-link ${status}`}
            aria-current={filters.get("status") === status ? "true" : undefined}
          >
            {status} <strong data-count={status}>{counts[status] ?? 0}</strong>
          </a>
        ))}
      </nav>
      {/* Uncontrolled fields (a refresh never rewrites what is being typed), remade when the
          filters in the address change. */}
      <form class="filters" onSubmit={apply} aria-label="Filter runs" key={key}>
        <label>
          Status
          <select name="status">
            <option value="">any</option>
            {STATUSES.map((status) => (
              <option key={status} value={status} selected={filters.get("status") === status}>
                {status}
              </option>
            ))}
          </select>
        </label>
        <label>
          Script{" "}
          <input name="script" defaultValue={filters.get("script") ?? ""} placeholder="order.ts" />
        </label>
        <label>
          Toolset <input name="toolset" defaultValue={filters.get("toolset") ?? ""} />
        </label>
        <label>
          Epoch{" "}
          <input name="epoch" type="number" min={1} defaultValue={filters.get("epoch") ?? ""} />
        </label>
        <label>
          Created from{" "}
          <input
            name="createdFrom"
            type="datetime-local"
            defaultValue={filters.get("createdFrom") ?? ""}
          />
        </label>
        <label>
          to{" "}
          <input
            name="createdTo"
            type="datetime-local"
            defaultValue={filters.get("createdTo") ?? ""}
          />
        </label>
        <label>
          Forks
          <select name="fork">
            <option value="">all runs</option>
            <option value="true" selected={filters.get("fork") === "true"}>
              only forks
            </option>
            <option value="false" selected={filters.get("fork") === "false"}>
              no forks
            </option>
          </select>
        </label>
        <label>
          Forks of{" "}
          <input name="parent" defaultValue={filters.get("parent") ?? ""} placeholder="run id" />
        </label>
        <label>
          Text in id or error <input name="q" type="search" defaultValue={filters.get("q") ?? ""} />
        </label>
        <label>
          Order
          <select name="order">
            <option value="newest">newest first</option>
            <option value="oldest" selected={oldest}>
              oldest first
            </option>
          </select>
        </label>
        <button type="submit">Filter</button>
        <a href={runsHref()}>Clear</a>
      </form>
      {list.error !== undefined && (
        <p class="problem" role="alert">
          {list.error}
        </p>
      )}
      <div class="table-scroll">
        <table id="runs">
          <caption class="visually-hidden">Runs</caption>
          <thead>
            <tr>
              <th scope="col">run</th>
              <th scope="col">status</th>
              <th scope="col">script</th>
              <th scope="col">toolset</th>
              <th scope="col">epoch</th>
              <th scope="col">created</th>
              <th scope="col">error</th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.runs ?? []).map((run) => (
              <tr key={run.id} data-run={run.id}>
                <td>
                  <a class="mono" href={runHref(run.id)}>
                    {run.id}
                  </a>
                  {run.parent !== undefined && <span class="tag">fork</span>}
                </td>
                <td>
                  <span class={`status ${run.status}`}>{run.status}</span>
                </td>
                <td title={run.scriptHash}>{run.script ?? run.scriptHash.slice(0, 19)}</td>
                <td>{run.toolset}</td>
                <td>{run.epoch}</td>
                <td>{localTime(run.createdAt)}</td>
                <td class="error-cell">{run.error?.message ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {list.data !== undefined && list.data.runs.length === 0 && (
        <p class="muted" id="runs-empty">
          No run matches.
        </p>
      )}
      <div class="pager">
        <button
          type="button"
          disabled={cursors.length === 0}
          onClick={() => setCursors(cursors.slice(0, -1))}
        >
          {oldest ? "Older" : "Newer"}
        </button>
        <button
          type="button"
          disabled={list.data?.next === undefined}
          onClick={() => list.data?.next && setCursors([...cursors, list.data.next])}
        >
          {oldest ? "Newer" : "Older"}
        </button>
      </div>
    </div>
  );
}
