/**
 * The page's place, kept in the address's fragment (`#/runs?status=failed`, `#/runs/run_…`), so
 * a view can be bookmarked and shared; the fragment never reaches a server.
 */
export type Route =
  { page: "overview" } | { page: "runs"; query: URLSearchParams } | { page: "run"; id: string };

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, "");
  const [where = "", search = ""] = path.split("?", 2);
  if (where === "/runs") return { page: "runs", query: new URLSearchParams(search) };
  const run = /^\/runs\/([^/]+)$/.exec(where);
  if (run !== null) {
    try {
      return { page: "run", id: decodeURIComponent(run[1]!) };
    } catch {
      return { page: "runs", query: new URLSearchParams() };
    }
  }
  return { page: "overview" };
}

export const runHref = (id: string) => `#/runs/${encodeURIComponent(id)}`;
export const runsHref = (query: URLSearchParams = new URLSearchParams()) =>
  `#/runs${query.size > 0 ? `?${query.toString()}` : ""}`;
