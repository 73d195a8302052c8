import { createContext } from "preact";
import { useContext, useState } from "preact/hooks";
import type { Json } from "./api.js";
import { briefValue, showValue } from "./format.js";

/** Past this many characters a value is shown only when asked for: it may be megabytes. */
const SHOWN_AT_ONCE = 2_000;

/**
 * Values the page does not hold, by `seq.field` (`12.result`, `run.result`): an explore file
 * leaves out those past its bound, and says so where each would be. Empty for the live page.
 */
export const OmittedValues = createContext<Readonly<Record<string, number>>>({});

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

export function Brief({ value }: { value: Json | undefined }) {
  return <code class="brief">{briefValue(value)}</code>;
}
