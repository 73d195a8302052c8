import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import {
  ApiError,
  type Api,
  type CompileProblem,
  type CompiledScriptView,
  type ForkPreview,
  type JournalEntry,
  type ReplayResult,
  type RunScript,
  type RunView,
} from "./api.js";
import { DivergenceDiff } from "./divergence-diff.js";
import { ForkPreviewView } from "./fork-preview.js";
import { runHref } from "./route.js";
import { filesOf } from "./script-files.js";
import { ScriptEditor, toCompile, type DraftScript } from "./script-editor.js";

/**
 * A corrected script, pasted or uploaded, checked against the run (a replay check, with its
 * verdict) or previewed as a fork (entries reused, the first live call, calls that run again,
 * those unsafe to repeat) before the fork is confirmed. The server compiles the files
 * (POST /v1/scripts/compile); a divergence is shown as a diff against the run's own script.
 * A modal <dialog>: Escape closes it, focus stays inside while it is open.
 */
export function CorrectedScriptDialog(props: {
  api: Api;
  run: RunView;
  script: RunScript;
  journal: readonly JournalEntry[];
  onClose: () => void;
}) {
  const { api, run, script, journal, onClose } = props;
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  const original = useMemo(() => filesOf(script.sourceMap), [script.sourceMap]);
  const [draft, setDraft] = useState<DraftScript>(() => {
    const entry = original.has(script.entry)
      ? script.entry
      : ([...original.keys()][0] ?? script.entry);
    // The entry file first, then the others as the bundle lists them.
    const files = [...original].map(([name, text]) => ({ name, text }));
    files.sort((a, b) => Number(b.name === entry) - Number(a.name === entry));
    return { entry, files: files.length > 0 ? files : [{ name: entry, text: "" }] };
  });
  const [problems, setProblems] = useState<CompileProblem[]>([]);
  const [compiled, setCompiled] = useState<CompiledScriptView>();
  const [check, setCheck] = useState<ReplayResult>();
  const [preview, setPreview] = useState<ForkPreview>();
  const [outcome, setOutcome] = useState<string>();
  const [busy, setBusy] = useState(false);

  function edit(next: DraftScript) {
    setDraft(next);
    // What was checked was another script: its verdict and preview no longer hold.
    setCompiled(undefined);
    setCheck(undefined);
    setPreview(undefined);
  }

  async function act(what: string, action: () => Promise<string>) {
    setBusy(true);
    setOutcome(`${what}…`);
    try {
      setOutcome(await action());
    } catch (error) {
      if (error instanceof ApiError && error.code === "COMPILE_ERROR") setProblems(error.problems);
      setOutcome(`${what} refused: ${(error as Error).message}`);
    } finally {
      setBusy(false);
    }
  }

  async function compile(): Promise<CompiledScriptView> {
    if (compiled !== undefined) return compiled;
    setProblems([]);
    const answer = await api.compile(toCompile(draft));
    setCompiled(answer);
    return answer;
  }

  const checkReplay = () =>
    act("replay check", async () => {
      const result = await api.replay(run.id, await compile());
      setCheck(result);
      return `replay check: ${result.verdict}`;
    });
  const previewFork = () =>
    act("fork preview", async () => {
      const corrected = await compile();
      const [answer, result] = await Promise.all([
        api.fork(run.id, corrected, true),
        api.replay(run.id, corrected),
      ]);
      setPreview(answer.preview);
      setCheck(result);
      return `fork preview: reuses ${answer.preview.reused} entries`;
    });
  const fork = (at?: number) =>
    act("fork", async () => {
      const answer = await api.fork(run.id, await compile(), false, at);
      if (answer.id === undefined) return "the fork was not made";
      dialog.current?.close();
      location.hash = runHref(answer.id);
      return `started ${answer.id}`;
    });

  const divergence = check?.matches === false ? check.divergence : undefined;
  return (
    <dialog
      ref={dialog}
      class="corrected-script"
      aria-labelledby="corrected-title"
      onClose={onClose}
    >
      <div class="dialog-head">
        <h2 id="corrected-title">Fork or check {run.id} with a corrected script</h2>
        <button type="button" onClick={() => dialog.current?.close()}>
          Close
        </button>
      </div>
      <p class="muted">
        Edit the files of {script.entry} as this run ran them, paste over them, or upload others.
        The API compiles them; imports resolve among these files and "rewind" only.
      </p>
      <ScriptEditor draft={draft} onChange={edit} problems={problems} disabled={busy} />
      <div class="buttons">
        <button type="button" disabled={busy} onClick={() => void checkReplay()}>
          Check replay
        </button>
        <button type="button" disabled={busy} onClick={() => void previewFork()}>
          Preview fork with it
        </button>
      </div>
      {outcome !== undefined && (
        <p class="outcome" role="status">
          {outcome}
        </p>
      )}
      {check !== undefined && <Verdict check={check} />}
      {preview !== undefined && (
        <ForkPreviewView preview={preview} title="Fork with the corrected script">
          <button type="button" disabled={busy} onClick={() => void fork()}>
            Fork with the corrected script
          </button>
        </ForkPreviewView>
      )}
      {divergence !== undefined && (
        <DivergenceDiff
          journal={journal}
          divergence={divergence}
          before={original}
          after={new Map(draft.files.map((f) => [f.name, f.text]))}
          afterName="corrected"
        >
          {divergence.seq > 2 && (
            <button type="button" disabled={busy} onClick={() => void fork(divergence.seq)}>
              Fork from #{divergence.seq - 1}, the last matching entry
            </button>
          )}
        </DivergenceDiff>
      )}
    </dialog>
  );
}

function Verdict({ check }: { check: ReplayResult }) {
  const d = check.divergence;
  const words =
    check.verdict === "matches"
      ? `matches: the corrected script replays this run's ${check.entries ?? ""} entries exactly.`
      : check.verdict === "fixes-failure"
        ? `fixes-failure: it diverges only where the run failed (#${d?.seq ?? "?"}): a fork reuses the ${Math.max(0, (d?.seq ?? 2) - 2)} entries after its start and before it, and runs on live.`
        : `incompatible: it diverges at #${d?.seq ?? "?"}, before the run's end or failure: a fork would run live from there.`;
  return (
    <p
      class={check.verdict === "incompatible" ? "verdict bad" : "verdict ok"}
      data-verdict={check.verdict}
    >
      {words}
    </p>
  );
}
