import { useEffect, useMemo, useState } from "preact/hooks";
import type {
  Api,
  JournalEntry,
  QuarantineDetail,
  ReplayResult,
  RunScript,
  RunView,
} from "./api.js";
import { DivergenceDiff, type Divergence } from "./divergence-diff.js";
import { runHref } from "./route.js";
import { filesOf } from "./script-files.js";
import { lacking, useToken } from "./token-scopes.js";
import { useAction } from "./use-action.js";

/**
 * A quarantined run's divergence on its page: the report's (labels and callsites), completed by a
 * replay check of its own script when the token may run one (the arguments the script emits
 * now), as a diff; and the actions that fit: release, give up, fork from the last matching entry.
 */
export function QuarantinePanel(props: {
  api: Api;
  run: RunView;
  script: RunScript | undefined;
  journal: readonly JournalEntry[];
  changed: () => void;
}) {
  const { api, run, script, journal, changed } = props;
  const token = useToken(api);
  const { busy, outcome, act } = useAction(changed);
  const [detail, setDetail] = useState<QuarantineDetail>();
  const [check, setCheck] = useState<ReplayResult>();
  const [problem, setProblem] = useState<string>();
  const [confirmGiveUp, setConfirmGiveUp] = useState(false);
  const mayRun = token !== undefined && token.scopes.includes("run");
  useEffect(() => {
    api.quarantined(run.id).then(setDetail, (error: Error) => setProblem(error.message));
  }, [run.id]);
  useEffect(() => {
    if (mayRun) api.replay(run.id).then(setCheck, (error: Error) => setProblem(error.message));
  }, [run.id, mayRun]);
  const files = useMemo(
    () => (script ? filesOf(script.sourceMap) : new Map<string, string>()),
    [script],
  );

  const reported = detail?.current?.divergence;
  const divergence: Divergence | undefined =
    check?.matches === false && check.divergence !== undefined ? check.divergence : reported;
  const operateRefused = lacking(token, "operate", "Releasing or giving up");
  const runRefused = lacking(token, "run", "Forking");

  return (
    <section class="quarantine-panel" aria-labelledby="quarantine-title">
      <h3 id="quarantine-title">Quarantined</h3>
      <p>
        Script{" "}
        <strong class="script-name">{detail?.run.script ?? script?.entry ?? run.scriptHash}</strong>
        {detail?.current !== undefined && (
          <>
            {" "}
            · {detail.current.reason}, quarantined at #{detail.current.seq} · epoch{" "}
            {detail.current.epoch}
          </>
        )}
      </p>
      {detail?.current?.message && <pre class="value error">{detail.current.message}</pre>}
      {check?.matches === true && (
        <p class="verdict ok">
          Replayed now, the run's script matches its {check.entries} entries: what diverged was the
          runtime, not the script. Releasing it should let it go on.
        </p>
      )}
      {problem !== undefined && <p class="problem">{problem}</p>}
      {(operateRefused ?? runRefused) !== undefined && (
        <p id="quarantine-refused" class="muted">
          {[operateRefused, runRefused].filter(Boolean).join(" ")}
        </p>
      )}
      {divergence !== undefined && (
        <DivergenceDiff
          journal={journal}
          divergence={divergence}
          before={files}
          after={files}
          afterName="the same script, replayed"
        >
          {actions()}
        </DivergenceDiff>
      )}
      {divergence === undefined && <div class="buttons">{actions()}</div>}
      {outcome !== undefined && (
        <p class="outcome" role="status">
          {outcome}
        </p>
      )}
    </section>
  );

  function actions() {
    return (
      <>
        <button
          type="button"
          disabled={busy || operateRefused !== undefined}
          aria-describedby={operateRefused ? "quarantine-refused" : undefined}
          onClick={() =>
            void act("release", async () => (await api.release(run.id, undefined)).message)
          }
        >
          Release
        </button>
        {!confirmGiveUp ? (
          <button
            type="button"
            disabled={busy || operateRefused !== undefined}
            aria-describedby={operateRefused ? "quarantine-refused" : undefined}
            onClick={() => setConfirmGiveUp(true)}
          >
            Give up…
          </button>
        ) : (
          <>
            <button
              type="button"
              class="danger"
              disabled={busy}
              onClick={() => {
                setConfirmGiveUp(false);
                void act(
                  "give up",
                  async () => (await api.giveUp(run.id, "given up from the dashboard")).message,
                );
              }}
            >
              Yes, give it up (it fails)
            </button>
            <button type="button" onClick={() => setConfirmGiveUp(false)}>
              Keep it quarantined
            </button>
          </>
        )}
        {divergence !== undefined && divergence.seq > 2 && (
          <button
            type="button"
            disabled={busy || runRefused !== undefined}
            aria-describedby={runRefused ? "quarantine-refused" : undefined}
            onClick={() =>
              void act("fork", async () => {
                const answer = await api.fork(
                  run.id,
                  { hash: run.scriptHash },
                  false,
                  divergence.seq,
                );
                if (answer.id !== undefined) location.hash = runHref(answer.id);
                return `started ${answer.id ?? ""}`;
              })
            }
          >
            Fork from #{divergence.seq - 1}, the last matching entry
          </button>
        )}
      </>
    );
  }
}
