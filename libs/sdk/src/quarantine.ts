import type { RunStatus, RunView } from "./client.js";

/** One side of a divergence: the entry in words, and the script line it came from. */
export interface EntryLabel {
  kind: string;
  label: string;
  callsite?: string;
}

/** An operator's request about a quarantined run, not yet acted on by the quarantine service. */
export interface PendingQuarantineRequest {
  id: number;
  action: "release" | "give-up";
  by: string;
  epoch?: number;
  reason?: string;
}

/** A quarantined run and the gist of its divergence report. */
export interface QuarantineSummary {
  id: string;
  status: RunStatus;
  epoch: number;
  toolset: string;
  /** The run's script: `sha256:` of its code. */
  scriptHash: string;
  /** Its entry file's name, e.g. order.ts. */
  script?: string;
  /** The seq of its run.quarantined entry. */
  seq: number;
  quarantinedAt: string;
  /** divergence, or invalid-journal. */
  reason: string;
  message: string;
  divergence?: { seq: number; matched: number; recorded: EntryLabel; replayed?: EntryLabel };
  runEpoch?: number;
  workerEpochs?: number[];
  worker?: { owner?: string; build?: string; [key: string]: unknown };
  pending: PendingQuarantineRequest[];
}

export interface QuarantineEvent {
  seq: number;
  kind: "run.quarantined" | "run.released" | "run.failed";
  at: string;
  by?: string;
  epoch?: number;
  message?: string;
}

export interface QuarantineDetail {
  run: RunView;
  quarantined: boolean;
  current?: QuarantineSummary;
  /** While quarantined: the whole report of its run.quarantined entry. */
  report?: Record<string, unknown>;
  history: QuarantineEvent[];
}

/** What became of a release or give-up: done, pending (the service has not acted yet), or unchanged. */
export interface QuarantineActionResult {
  action: "release" | "give-up";
  state: "done" | "pending" | "unchanged";
  message: string;
  run: RunView;
  request?: { id: number };
}

export interface EpochView {
  epoch: number;
  known: boolean;
  supported: boolean;
  current: boolean;
  released?: string;
  environment?: { v8: string; isolatedVm: string; icu: string; tz: string };
  sandboxDigest?: string;
  matchingDigest?: string;
  notes?: string;
  runs: { open: number; byStatus: Record<string, number> };
  /** Workers alive that run the epoch: with none, its runs wait for one. */
  workers: number;
  /** Those workers, by lease owner name, and when each was last seen. */
  liveWorkers?: { owner: string; seenAt: string }[];
  /** Open runs (quarantined ones aside) waiting for a worker of the epoch: none is alive. */
  waiting: number;
}

/** What became of one run in an epoch check (`rewind epochs migrate`). */
export interface EpochRunVerdict {
  runId: string;
  /** moved / would-move (dry run): it replays the same; diverges: it stays; skipped: see message. */
  verdict: "moved" | "would-move" | "diverges" | "skipped";
  checkedSeq?: number;
  divergedAt?: number;
  message?: string;
}

/** An operator's check of an epoch's open runs on another, done by a worker of the other. */
export interface EpochCheckView {
  id: number;
  from: number;
  to: number;
  dryRun: boolean;
  requestedBy: string;
  requestedAt: string;
  state: "pending" | "checking" | "done";
  takenBy?: string;
  finishedAt?: string;
  checkedBy?: string;
  runtime?: string;
  runs?: EpochRunVerdict[];
}
