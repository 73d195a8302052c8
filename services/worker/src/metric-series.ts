import { limitsEnforcedAt, type EntryKind } from "@rewind/core";
import type { Toolset } from "@rewind/sdk";
import { metrics } from "@rewind/telemetry";

/** Every entry kind (a Record, so a new kind that is not listed here fails to compile). */
const ENTRY_KINDS: Record<EntryKind, true> = {
  "run.started": true,
  "run.cancelled": true,
  "run.quarantined": true,
  "run.released": true,
  call: true,
  "timer.set": true,
  "timer.cancel": true,
  output: true,
  "run.completed": true,
  "run.failed": true,
  "call.result": true,
  "call.error": true,
  "timer.fired": true,
  signal: true,
};

/**
 * Makes the worker's series that can be known at start exist at 0 before anything happens. A
 * series that first appears with a count already above 0 loses that count in Prometheus's
 * increase() (it sees no sample before it), so a dashboard's "runs ended in the range" would be
 * short by the first few after each start of a worker.
 */
export function zeroWorkerSeries(toolsets: readonly Toolset[]): void {
  for (const status of ["completed", "failed", "cancelled"]) metrics.runsEnded.inc({ status }, 0);
  for (const kind of ["hot", "cold"]) {
    metrics.activations.inc({ kind }, 0);
    metrics.activationSeconds.zero({ kind });
  }
  for (const outcome of ["ok", "lease_lost"]) metrics.commits.inc({ outcome }, 0);
  for (const kind of Object.keys(ENTRY_KINDS)) metrics.entries.inc({ kind }, 0);
  for (const reason of ["divergence", "invalid-journal", "not-replayable"])
    metrics.quarantined.inc({ reason }, 0);
  for (const toolset of toolsets)
    for (const tool of toolset.tools.keys())
      for (const outcome of ["ok", "error"]) {
        const labels = { toolset: toolset.name, tool, outcome };
        metrics.toolCalls.inc(labels, 0);
        metrics.toolSeconds.zero(labels);
      }
  for (const limit of limitsEnforcedAt("journal")) metrics.limitsExceeded.inc({ limit }, 0);
  metrics.timerLateness.zero({});
  metrics.replaySeconds.zero({});
  metrics.commitSeconds.zero({});
}
