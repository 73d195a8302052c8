import type { ComponentChildren } from "preact";
import type { ForkPreview } from "./api.js";

/**
 * What a fork would do, as the API's dry run computed it: entries reused, the first live call,
 * reused calls that run again (with their callId), and those unsafe to repeat.
 */
export function ForkPreviewView(props: {
  preview: ForkPreview;
  title: string;
  children?: ComponentChildren;
}) {
  const { preview, title, children } = props;
  return (
    <div class="preview" role="region" aria-label="Fork preview">
      <h4>{title}</h4>
      <p>
        Reuses {preview.reused} entries;{" "}
        {preview.firstLive
          ? `runs live from #${preview.firstLive.seq} ${preview.firstLive.label}`
          : "nothing runs live"}
        {preview.firstLive?.callsite ? ` (${preview.firstLive.callsite})` : ""}.
      </p>
      {preview.runAgain.length > 0 && (
        <p>Calls again: {preview.runAgain.map((call) => `#${call.seq} ${call.name}`).join(", ")}</p>
      )}
      {preview.unsafe.map((call) => (
        <p class="warning" key={call.seq}>
          Unsafe to repeat: #{call.seq} {call.name}: {call.message}
        </p>
      ))}
      {!preview.toolsetKnown && (
        <p class="warning">
          No worker has published this run's toolset: tools unsafe to repeat could not be named.
        </p>
      )}
      {preview.failure !== undefined ? <p class="problem">{preview.failure.message}</p> : children}
    </div>
  );
}
