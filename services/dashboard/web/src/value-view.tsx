import { useState } from "preact/hooks";
import type { Json } from "./api.js";
import { briefValue, showValue } from "./format.js";

/** Past this many characters a value is shown only when asked for: it may be megabytes. */
const SHOWN_AT_ONCE = 2_000;

/**
 * A value from the run (arguments, results, input, payloads): tenants' data, shown as text only.
 * A large one is cut, and rendered whole only on demand.
 */
export function ValueView({ value, label }: { value: Json | undefined; label: string }) {
  const [open, setOpen] = useState(false);
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
