import { useState } from "preact/hooks";
import type { Api, ForkPreview, JournalEntry, ReplayResult, RunScript, RunView } from "./api.js";
import { CorrectedScriptDialog } from "./corrected-script-dialog.js";
import { DivergenceDiff } from "./divergence-diff.js";
import { field } from "./format.js";
import { ForkPreviewView } from "./fork-preview.js";
import { runHref } from "./route.js";
import { filesOf } from "./script-files.js";
import { lacking, useToken } from "./token-scopes.js";
import { useAction } from "./use-action.js";

const OPEN = new Set(["queued", "running", "waiting"]);

/**
 * What the operator can do to a run from its page: signal, cancel, fork (after its preview),
 * replay check, both with the run's script or a corrected one. A token without the "run" scope
 * sees them disabled, with the reason.
 */
export function RunActions(props: {
  api: Api;
  run: RunView;
  script: RunScript | undefined;
  journal: readonly JournalEntry[];
  changed: () => void;
}) {
  const { api, run, script, journal, changed } = props;
  const token = useToken(api);
  const { busy, outcome, act } = useAction(changed);
  const refused = lacking(token, "run", "Acting on a run");
  const [correcting, setCorrecting] = useState(false);
  const [preview, setPreview] = useState<ForkPreview>();
  const [verdict, setVerdict] = useState<ReplayResult>();
  const [confirmCancel, setConfirmCancel] = useState(false);
  const open = OPEN.has(run.status);

  function signal(event: Event) {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    const name = field(data, "name").trim();
    const text = field(data, "payload").trim();
    void act(`signal ${name}`, async () => {
      if (name === "") throw new Error("Name the signal the script waits for.");
      let payload: unknown = null;
      try {
        payload = text === "" ? null : JSON.parse(text);
      } catch (error) {
        throw new Error(
          `The payload is not JSON (${(error as Error).message}): write e.g. {"approved": true}`,
        );
      }
      await api.signal(run.id, name, payload);
      return "sent";
    });
  }

  return (
    <section class="actions-panel" aria-labelledby="actions-title">
      <h3 id="actions-title">Actions</h3>
      {refused !== undefined && (
        <p id="actions-refused" class="muted">
          {refused}
        </p>
      )}
      <fieldset
        class="plain"
        disabled={refused !== undefined}
        aria-describedby={refused === undefined ? undefined : "actions-refused"}
      >
        <legend class="visually-hidden">Actions on this run</legend>
        {open && (
          <form class="signal" onSubmit={signal} aria-label="Send a signal">
            <label>
              Signal <input name="name" required autocomplete="off" placeholder="approval" />
            </label>
            <label>
              Payload (JSON) <textarea name="payload" rows={2} placeholder='{"approved": true}' />
            </label>
            <button type="submit" disabled={busy}>
              Send signal
            </button>
          </form>
        )}
        <div class="buttons">
          {open && !confirmCancel && (
            <button type="button" onClick={() => setConfirmCancel(true)} disabled={busy}>
              Cancel run…
            </button>
          )}
          {open && confirmCancel && (
            <>
              <button
                type="button"
                class="danger"
                onClick={() => {
                  setConfirmCancel(false);
                  void act("cancel", async () => {
                    await api.cancel(run.id, "cancelled from the dashboard");
                    return "asked";
                  });
                }}
              >
                Yes, cancel it
              </button>
              <button type="button" onClick={() => setConfirmCancel(false)}>
                Keep it
              </button>
            </>
          )}
          <button
            type="button"
            disabled={busy}
            onClick={() =>
              void act("fork preview", async () => {
                const answer = await api.fork(run.id, { hash: run.scriptHash }, true);
                setPreview(answer.preview);
                return `reuses ${answer.preview.reused} entries`;
              })
            }
          >
            Preview fork
          </button>
          <button
            type="button"
            disabled={busy}
            onClick={() =>
              void act("replay check", async () => {
                const result = await api.replay(run.id);
                setVerdict(result);
                return result.matches ? "matches" : "diverges";
              })
            }
          >
            Replay check
          </button>
          <button
            type="button"
            disabled={busy || script === undefined}
            aria-haspopup="dialog"
            onClick={() => setCorrecting(true)}
          >
            Fork or check with a corrected script…
          </button>
        </div>
      </fieldset>
      {correcting && script !== undefined && (
        <CorrectedScriptDialog
          api={api}
          run={run}
          script={script}
          journal={journal}
          onClose={() => setCorrecting(false)}
        />
      )}
      {preview !== undefined && (
        <ForkPreviewView preview={preview} title="Fork with this run's script">
          <button
            type="button"
            disabled={busy}
            onClick={() =>
              void act("fork", async () => {
                const answer = await api.fork(run.id, { hash: run.scriptHash }, false);
                setPreview(undefined);
                if (answer.id !== undefined) location.hash = runHref(answer.id);
                return `started ${answer.id ?? ""}`;
              })
            }
          >
            Fork
          </button>
        </ForkPreviewView>
      )}
      {verdict !== undefined && (
        <p class={verdict.matches ? "verdict ok" : "verdict bad"} role="status">
          {verdict.matches
            ? `The script replays this run's ${verdict.entries ?? ""} entries exactly.`
            : `The script diverges from this run: ${verdict.message ?? ""}`}
        </p>
      )}
      {verdict?.divergence !== undefined &&
        script !== undefined &&
        run.status !== "quarantined" && (
          <DivergenceDiff
            journal={journal}
            divergence={verdict.divergence}
            before={filesOf(script.sourceMap)}
            after={filesOf(script.sourceMap)}
            afterName="the same script, replayed"
          />
        )}
      {outcome !== undefined && (
        <p class="outcome" role="status">
          {outcome}
        </p>
      )}
    </section>
  );
}
