import { ApiError, type Api } from "../api.js";
import { byId, fill } from "./dom.js";
import { renderEpochs, renderStatuses } from "./overview.js";
import { QuarantineTable, messageOf } from "./quarantine.js";

/** How often the Overview asks the API again. */
const REFRESH_MS = 2_000;

/**
 * Keeps the Overview's elements (rendered by overview-page.tsx) up to date until the returned
 * function is called. A 401 hands over to `refused`: the token is no good.
 */
export function startOverview(
  api: Api,
  report: (problem: string | undefined) => void,
  refused: (message: string) => void,
): () => void {
  let timer: number | undefined;
  let stopped = false;
  let running = false;
  let again = false;
  const quarantine = new QuarantineTable(api, () => void refresh());

  // One refresh at a time: one asked for meanwhile (after an action) runs when it ends, and the
  // next tick is planned only then, so a slow API is never piled on.
  async function refresh(): Promise<void> {
    if (running) {
      again = true;
      return;
    }
    running = true;
    window.clearTimeout(timer);
    try {
      const [epochs, quarantined] = await Promise.all([api.epochs(), api.quarantine()]);
      // Stopped, or the Overview's elements gone another way: nothing to fill, nothing to say.
      if (stopped || document.getElementById("overview") === null) return;
      renderStatuses(epochs);
      renderEpochs(epochs);
      quarantine.render(quarantined);
      report(undefined);
      fill(byId("updated"), `updated ${new Date().toLocaleTimeString()}`);
    } catch (error) {
      if (stopped || document.getElementById("overview") === null) return;
      if (error instanceof ApiError && error.status === 401) {
        refused(`The API refused the token: ${error.message}`);
        return;
      }
      report(messageOf(error));
    } finally {
      running = false;
    }
    if (stopped) return;
    if (again) {
      again = false;
      void refresh();
    } else timer = window.setTimeout(() => void refresh(), REFRESH_MS);
  }
  void refresh();
  return () => {
    stopped = true;
    window.clearTimeout(timer);
  };
}
