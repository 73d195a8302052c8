import type { Limits, OutputEntry, Toolset } from "@rewind/core";
import type { ScriptSandbox } from "@rewind/sandbox";
import type { RunStatus, Store } from "@rewind/store";

export interface ExecutorOptions {
  store: Store;
  /** What runs the scripts: SandboxProcesses in a service, so that an abort costs only that run. */
  sandbox: ScriptSandbox;
  toolsets: ReadonlyMap<string, Toolset>;
  /** This process's lease owner name: unique per process incarnation. */
  owner: string;
  leaseTtlMs?: number;
  /** At most this many hot runs (default 10,000)… */
  maxHotRuns?: number;
  /**
   * …and at most this much sandbox heap (default 1 GiB): past either, the least recently active
   * idle runs leave memory (their next activation replays them from the journal).
   */
  maxHotBytes?: number;
  maxValueBytes?: number;
  /**
   * Defaults of the limits that hold inside a run (journal entries and bytes, output bytes,
   * timers) for namespaces that set none of their own (default: REWIND_LIMIT_* or built-in).
   */
  limits?: Partial<Limits>;
  /**
   * How many times in a row a run may be loaded cold without journaling progress (each time, its
   * process died under it: a heap blow-up aborts the process) before it is failed. Default 5.
   */
  maxAttempts?: number;
  /** Take leases whatever their state: for a single-process platform recovering after a crash. */
  stealLeases?: boolean;
  now?: () => number;
  /**
   * After each commit of a run's entries, with the run's status after it: lets followers of the
   * journal (long-polls, streams) wake up, and those waiting for its end when it has ended.
   */
  onCommitted?: (runId: string, status: RunStatus) => void;
  /** Output, once committed: what clients are shown. */
  onOutput?: (runId: string, entry: OutputEntry) => void;
  onEnded?: (runId: string, status: RunStatus) => void;
  /** A sandbox process died while this run's script executed in it (the death is charged). */
  onDeath?: (runId: string, why: string) => void;
  /**
   * A run quarantined after a divergence, once its run.quarantined entry (at `seq`) committed:
   * for the worker's log line.
   */
  onQuarantined?: (runId: string, seq: number, reason: string) => void;
  /** An activation that failed (the store unreachable …); it is retried. */
  onError?: (runId: string, error: unknown) => void;
  /**
   * Fault injection for tests: called at each step of an activation; returning true kills this
   * executor there, as a kill -9 would (nothing more is committed or acted on).
   */
  crashAt?: (point: FaultPoint, runId: string) => boolean;
  /**
   * The determinism epochs this executor runs (default: those this build supports in this
   * process, see epochSupport). It never takes the lease of a run of another epoch.
   */
  epochs?: readonly number[];
  /** This worker's build, named in the reports of the runs it quarantines (default: the version). */
  build?: string;
}

/** The steps of an activation: entries produced, entries committed, effects started. */
export type FaultPoint = "produced" | "committed" | "acted";
