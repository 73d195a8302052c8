import { Api, ApiError } from "./api.js";
import { byId, fill } from "./dom.js";
import { renderEpochs, renderStatuses } from "./overview.js";
import { QuarantineTable, messageOf } from "./quarantine.js";
import { forgetToken, keepToken, takeToken } from "./token.js";

/** How often the Overview asks the API again. */
const REFRESH_MS = 3_000;

let stop: (() => void) | undefined;

function start(token: string): void {
  stop?.();
  const api = new Api(token);
  byId("token-form").hidden = true;
  byId("overview").hidden = false;
  byId("forget").hidden = false;
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
      if (stopped) return;
      renderStatuses(epochs);
      renderEpochs(epochs);
      quarantine.render(quarantined);
      showProblem(undefined);
      fill(byId("updated"), `updated ${new Date().toLocaleTimeString()}`);
    } catch (error) {
      if (stopped) return;
      if (error instanceof ApiError && error.status === 401) {
        askForToken(`The API refused the token: ${error.message}`);
        return;
      }
      showProblem(messageOf(error));
    } finally {
      running = false;
    }
    if (stopped) return;
    if (again) {
      again = false;
      void refresh();
    } else timer = window.setTimeout(() => void refresh(), REFRESH_MS);
  }
  stop = () => {
    stopped = true;
    window.clearTimeout(timer);
  };
  void refresh();
}

function askForToken(problem?: string): void {
  stop?.();
  forgetToken();
  byId("overview").hidden = true;
  byId("forget").hidden = true;
  byId("token-form").hidden = false;
  showProblem(problem);
  byId<HTMLInputElement>("token-input").focus();
}

function showProblem(message: string | undefined): void {
  const problem = byId("problem");
  problem.hidden = message === undefined;
  fill(problem, message ?? "");
}

byId("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = byId<HTMLInputElement>("token-input");
  const token = input.value.trim();
  if (token === "") return showProblem("Paste an API token first.");
  input.value = "";
  keepToken(token);
  showProblem(undefined);
  start(token);
});
byId("forget").addEventListener("click", () => askForToken());

const token = takeToken();
if (token === undefined) askForToken();
else start(token);
