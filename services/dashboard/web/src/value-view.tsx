import { createContext } from "preact";
import { useContext, useState } from "preact/hooks";
import type { DeferredValue, Json } from "./api.js";
import { briefValue, showValue } from "./format.js";

/** Past this many characters a value is shown only when asked for: it may be megabytes. */
const SHOWN_AT_ONCE = 2_000;

/**
 * Values the page does not hold, by `seq.field` (`12.result`, `run.result`): an explore file
 * leaves out those past its bound, and says so where each would be. Empty for the live page.
 */
export const OmittedValues = createContext<Readonly<Record<string, number>>>({});

/**
 * Values the API left out of the journal (those in the blob store), by `seq.field`, and how to
 * read one: the page lists a run of large values without loading them, and loads one when opened.
 */
export const DeferredValues = createContext<{
  deferred: Readonly<Record<string, DeferredValue>>;
  load?: (ref: string) => Promise<Json>;
}>({ deferred: {} });

/** Whether the value at `where` was deferred by the API (and is null in its entry). */
export function useDeferred(where: string): DeferredValue | undefined {
  return useContext(DeferredValues).deferred[where];
}

/** The size of the value left out at `where` (`12.args`), if it was. */
export function useOmitted(where: string): number | undefined {
  return useContext(OmittedValues)[where];
}

/**
 * A value from the run (arguments, results, input, payloads): tenants' data, shown as text only.
 * A large one is cut, and rendered whole only on demand; one left out of an explore file says so.
 */
export function ValueView(props: { value: Json | undefined; label: string; where?: string }) {
  const { value, label, where } = props;
  const [open, setOpen] = useState(false);
  const omitted = useOmitted(where ?? "");
  const deferred = useDeferred(where ?? "");
  if (where !== undefined && deferred !== undefined)
    return <OnDemand key={deferred.ref} where={where} deferred={deferred} label={label} />;
  if (where !== undefined && omitted !== undefined)
    return (
      <p class="value omitted muted" data-omitted={where}>
        Left out of this file to keep it small: {label}, {omitted.toLocaleString()} characters of
        JSON. Read it from the run (<code>rewind runs show --json</code>), or make the file again
        with a larger <code>--value-limit</code>.
      </p>
    );
  const text = showValue(value);
  if (text.length <= SHOWN_AT_ONCE)
    return (
      <pre tabIndex={0} class="value">
        {text}
      </pre>
    );
  return (
    <div class="value-large">
      <pre tabIndex={0} class="value">
        {open ? text : `${text.slice(0, SHOWN_AT_ONCE)}…`}
      </pre>
      <button type="button" onClick={() => setOpen(!open)} aria-expanded={open}>
        {open
          ? `Cut ${label}`
          : `Show all of ${label} (${text.length.toLocaleString()} characters)`}
      </button>
    </div>
  );
}

/**
 * A value the journal page left out (kept in the blob store): its size, and a button that reads
 * it from the API; then it is shown as any other value.
 */
function OnDemand(props: { where: string; deferred: DeferredValue; label: string }) {
  const { where, deferred, label } = props;
  const { load } = useContext(DeferredValues);
  const [state, setState] = useState<
    | { at: "closed" }
    | { at: "loading" }
    | { at: "loaded"; value: Json }
    | { at: "failed"; why: string }
  >({ at: "closed" });
  if (state.at === "loaded") return <ValueView value={state.value} label={label} />;
  return (
    <div class="value-large" data-deferred={where}>
      <p class="value muted">
        {label[0]?.toUpperCase()}
        {label.slice(1)}: {deferred.size.toLocaleString()} bytes, kept in the blob store and read
        when asked for.
      </p>
      {state.at === "failed" && <p class="problem">{state.why}</p>}
      <button
        type="button"
        disabled={load === undefined || state.at === "loading"}
        onClick={() => {
          if (load === undefined) return;
          setState({ at: "loading" });
          load(deferred.ref).then(
            (value) => setState({ at: "loaded", value }),
            (error: Error) => setState({ at: "failed", why: error.message }),
          );
        }}
      >
        {state.at === "loading" ? `Loading ${label}…` : `Load ${label}`}
      </button>
    </div>
  );
}

export function Brief({ value, where }: { value: Json | undefined; where?: string }) {
  const deferred = useDeferred(where ?? "");
  return (
    <code class="brief">
      {deferred !== undefined
        ? `(${deferred.size.toLocaleString()} bytes, read when opened)`
        : briefValue(value)}
    </code>
  );
}
