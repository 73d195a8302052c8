import type { CompileProblem } from "./api.js";

/** A corrected script being written: its files by relative path, and which one is the entry. */
export interface DraftScript {
  entry: string;
  files: { name: string; text: string }[];
}

/** Names the API takes (see CompileScriptBody): a relative path ending in .ts or .js. */
const NAME = /^(?:[A-Za-z0-9_][A-Za-z0-9._-]*\/)*[A-Za-z0-9_][A-Za-z0-9._-]*\.(?:c|m)?[jt]sx?$/;

/**
 * The corrected script's files, each in a text box (pasted or edited), more added by upload (a
 * file of the same name replaces the one there). Compile errors are listed by file, line and
 * column, each beside its file.
 */
export function ScriptEditor(props: {
  draft: DraftScript;
  onChange: (draft: DraftScript) => void;
  problems: CompileProblem[];
  disabled?: boolean;
}) {
  const { draft, onChange, problems, disabled } = props;
  const setText = (name: string, text: string) =>
    onChange({ ...draft, files: draft.files.map((f) => (f.name === name ? { name, text } : f)) });

  async function upload(event: Event) {
    const input = event.currentTarget as HTMLInputElement;
    const chosen = [...(input.files ?? [])];
    const read = await Promise.all(
      chosen.map(async (file) => ({
        // A folder upload keeps its paths below the folder chosen (lib/price.ts).
        name:
          (file.webkitRelativePath || file.name)
            .split("/")
            .slice(file.webkitRelativePath ? 1 : 0)
            .join("/") || file.name,
        text: await file.text(),
      })),
    );
    const files = [...draft.files];
    for (const file of read) {
      let at = files.findIndex((f) => f.name === file.name);
      // A file picked alone has no folder: price.ts replaces lib/price.ts when that is the
      // only file of that name.
      if (at < 0 && !file.name.includes("/")) {
        const same = files.flatMap((f, i) => (baseName(f.name) === file.name ? [i] : []));
        if (same.length === 1) at = same[0]!;
      }
      if (at >= 0) files[at] = { name: files[at]!.name, text: file.text };
      else files.push(file);
    }
    input.value = "";
    onChange({
      entry: files.some((f) => f.name === draft.entry) ? draft.entry : files[0]!.name,
      files,
    });
  }

  return (
    <fieldset class="script-editor" disabled={disabled}>
      <legend>Corrected script</legend>
      <label>
        Entry file{" "}
        <select
          name="entry"
          value={draft.entry}
          onChange={(event) => onChange({ ...draft, entry: event.currentTarget.value })}
        >
          {draft.files.map((file) => (
            <option key={file.name} value={file.name}>
              {file.name}
            </option>
          ))}
        </select>
      </label>
      {draft.files.map((file) => {
        const own = problems.filter((p) => p.file === file.name);
        const bad = !NAME.test(file.name);
        const id = `file-${file.name.replace(/[^A-Za-z0-9_-]/g, "_")}`;
        return (
          <div class="script-file" key={file.name} data-file={file.name}>
            <label for={id}>
              {file.name}
              {file.name === draft.entry ? " (entry)" : ""}
            </label>
            <textarea
              id={id}
              class="code-input"
              rows={Math.min(16, Math.max(4, file.text.split("\n").length + 1))}
              spellcheck={false}
              value={file.text}
              aria-invalid={own.length > 0 || bad}
              aria-describedby={own.length > 0 || bad ? `${id}-problems` : undefined}
              onInput={(event) => setText(file.name, event.currentTarget.value)}
            />
            {(own.length > 0 || bad) && (
              <ul id={`${id}-problems`} class="compile-problems">
                {bad && (
                  <li>
                    {file.name} is not a file name the API takes: a relative path ending in .ts or
                    .js.
                  </li>
                )}
                {own.map((p, i) => (
                  <li key={i}>
                    <span class="mono">
                      {p.file}:{p.line}:{p.column}
                    </span>{" "}
                    {p.message}
                  </li>
                ))}
              </ul>
            )}
            {file.name !== draft.entry && (
              <button
                type="button"
                class="link"
                onClick={() =>
                  onChange({ ...draft, files: draft.files.filter((f) => f.name !== file.name) })
                }
              >
                Remove {file.name}
              </button>
            )}
          </div>
        );
      })}
      <label>
        Upload files (each replaces the file of its name){" "}
        <input
          type="file"
          multiple
          accept=".ts,.tsx,.mts,.cts,.js,.jsx,.mjs,.cjs"
          onChange={(e) => void upload(e)}
        />
      </label>
    </fieldset>
  );
}

/** The draft as POST /v1/scripts/compile takes it. */
export function toCompile(draft: DraftScript): { entry: string; files: Record<string, string> } {
  return {
    entry: draft.entry,
    files: Object.fromEntries(draft.files.map((f) => [f.name, f.text])),
  };
}

function baseName(name: string): string {
  return name.slice(name.lastIndexOf("/") + 1);
}
