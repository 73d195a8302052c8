import { useLayoutEffect } from "preact/hooks";
import type { Api } from "./api.js";
import { startOverview } from "./overview/start.js";

/**
 * The Overview: open runs by status, epochs, quarantined runs with release and give-up. Preact
 * renders the frame; overview/ fills it in place and keeps it fresh (rows kept by run id, so an
 * open report and a half-typed reason survive each refresh).
 */
export function OverviewPage(props: {
  api: Api;
  report: (problem: string | undefined) => void;
  refused: (message: string) => void;
}) {
  const { api, report, refused } = props;
  // A layout effect, not a passive one: Preact runs a passive effect's cleanup only after the
  // next paint, so a refresh answered between the page's removal and that paint would fill
  // elements no longer there (and say so on the next page). A layout cleanup runs as it goes.
  useLayoutEffect(() => startOverview(api, report, refused), [api]);
  return (
    <div id="overview">
      <section>
        <h2>Open runs by status</h2>
        <div id="statuses" class="tiles"></div>
      </section>
      <section>
        <h2>Epochs</h2>
        <p id="epochs-waiting" class="warning" hidden></p>
        {/* A narrow screen scrolls the table, not the page. */}
        <div class="table-scroll">
          <table id="epochs">
            <thead>
              <tr>
                <th scope="col">epoch</th>
                <th scope="col">this build</th>
                <th scope="col">runtime</th>
                <th scope="col">workers</th>
                <th scope="col">open runs</th>
                <th scope="col">by status</th>
              </tr>
            </thead>
            <tbody></tbody>
          </table>
        </div>
      </section>
      <section>
        <h2>Quarantined runs</h2>
        <p class="muted">
          A replay left its journal: the platform is at fault, so the run is held. Release it after
          a fix (optionally onto another epoch), or give up on it.
        </p>
        <p id="quarantine-empty" class="muted" hidden>
          No run is quarantined.
        </p>
        <div class="table-scroll">
          <table id="quarantine">
            <thead>
              <tr>
                <th scope="col">run</th>
                <th scope="col">script</th>
                <th scope="col">epoch</th>
                <th scope="col">reason</th>
                <th scope="col">diverges at</th>
                <th scope="col">since</th>
                <th scope="col">
                  <span class="visually-hidden">report</span>
                </th>
              </tr>
            </thead>
            <tbody></tbody>
          </table>
        </div>
        <p id="quarantine-more" class="muted" hidden></p>
      </section>
      <section>
        <h2>Recent actions</h2>
        <p id="actions-none" class="muted">
          None in this tab yet.
        </p>
        <ol id="actions" class="actions"></ol>
      </section>
    </div>
  );
}
