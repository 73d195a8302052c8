import { createRequire } from "node:module";
import {
  RewindError,
  inCanonicalOrder,
  type Json,
  type JournalEntry,
  type RunQuarantinedEntry,
} from "@rewind/core";
import { DivergenceError } from "@rewind/journal";
import {
  currentEnvironment,
  guestBundle,
  type CompiledScript,
  type ScriptSandbox,
} from "@rewind/sandbox";
import { checkReplay } from "../replay-check.js";

/**
 * Why a worker quarantines a run instead of running it: its replay left its journal
 * (`divergence`), or its journal cannot be replayed at all (`invalid-journal`: an outcome for a
 * call that was never made, entries after the run's end). Either way a fault of the platform or
 * of the stored journal, never of the run: it is held, not failed. `not-replayable`: a capture
 * policy redacted an entry the script saw in the clear (docs/capture-policy.md), and the run lost
 * its live sandbox: replaying it would feed the script markers.
 */
export type QuarantineReason = "divergence" | "invalid-journal" | "not-replayable";

export function quarantineReason(error: unknown): QuarantineReason | undefined {
  if (error instanceof DivergenceError) return "divergence";
  if (error instanceof RewindError && (error.code === "CONFLICT" || error.code === "INVALID_INPUT"))
    return "invalid-journal";
  return undefined;
}

/** Who quarantined the run: named in the report, so an operator knows which build to look at. */
export interface WorkerIdentity {
  owner: string;
  build: string;
  epochs: readonly number[];
}

let version: string | undefined;

/** This build of Rewind: the executor package's version (src/live and dist/live alike). */
export function buildVersion(): string {
  version ??= (createRequire(import.meta.url)("../../package.json") as { version: string }).version;
  return `rewind ${version}`;
}

/**
 * The run.quarantined entry: the divergence (seq, both sides labelled, both callsites), the
 * run's epoch and the worker's, the worker's build and environment. A fast replay skips the
 * callsites of recorded batches; when the script's side lacks one, the run is replayed again
 * with callsites on to complete the report. If that second replay matches, the platform is
 * nondeterministic: the run is quarantined all the same, and the report says so.
 */
export async function quarantineEntry(args: {
  error: DivergenceError | RewindError;
  reason: QuarantineReason;
  /** Fields of the report beside the message (a not-replayable run's seq and rules). */
  details?: Record<string, Json>;
  journal: readonly JournalEntry[];
  runEpoch: number;
  worker: WorkerIdentity;
  sandbox: ScriptSandbox;
  script: CompiledScript;
  at: number;
}): Promise<RunQuarantinedEntry> {
  const { error, journal, sandbox, script } = args;
  let message = error.message;
  let divergence: Record<string, Json> = {};
  let note: string | undefined;
  if (error instanceof DivergenceError) {
    let report = error.report;
    if (report.replayed !== undefined && !report.replayed.callsite) {
      const check = await checkReplay(sandbox, script, journal).catch(() => undefined);
      if (check?.matches === false) {
        report = check.divergence;
        message = check.message;
      } else if (check?.matches === true) {
        note =
          "A second replay of the same journal matched: the platform computed two different " +
          "things from the same input (a nondeterministic platform bug). Report it with this run.";
      }
    }
    divergence = { ...report } as unknown as Record<string, Json>;
  }
  const environment = currentEnvironment();
  const report = inCanonicalOrder({
    reason: args.reason,
    message,
    ...divergence,
    ...(args.details ?? {}),
    runEpoch: args.runEpoch,
    workerEpochs: [...args.worker.epochs],
    worker: {
      owner: args.worker.owner,
      build: args.worker.build,
      v8: environment.v8,
      isolatedVm: environment.isolatedVm,
      sandboxDigest: guestBundle(args.runEpoch).digest,
    },
    ...(note === undefined ? {} : { note }),
  });
  return {
    seq: journal.length + 1,
    kind: "run.quarantined",
    at: Math.max(args.at, journal[journal.length - 1]!.at),
    report,
  };
}
