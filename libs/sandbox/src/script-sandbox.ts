/**
 * What runs a run's script, seen from the executor: the in-process Sandbox, or a pool of
 * supervised sandbox processes (libs/executor's SandboxProcesses) where an abort costs only the
 * process that ran the script, never the one that serves other runs.
 */
import { RewindError, type GuestCommand, type GuestEvent, type Json } from "@rewind/core";
import type { CompiledScript } from "./compiler.js";
import type { SandboxOptions } from "./host.js";

export interface InstantiateOptions {
  seed: string;
  startAt: number;
  /**
   * The run's determinism epoch: its context evaluates that epoch's guest runtime (default:
   * `newRunEpoch()`, the epoch a new run on this process starts in). A replay passes the epoch of
   * the journal's `run.started`.
   */
  epoch?: number;
  /** In async mode: replayed batches in fast sync slices (see SandboxOptions.replaySliceMs). */
  fastReplay?: boolean;
  /** In async mode: live activations in sync slices (see SandboxOptions.liveSliceMs). */
  liveSlices?: boolean;
  /** The run this instance belongs to: a supervisor charges a death to the run executing. */
  runId?: string;
}

/** One run's live script: deliver an event, get back the commands it emitted. */
export interface ScriptHandle {
  start(input: Json): Promise<GuestCommand[]>;
  deliver(event: GuestEvent): Promise<GuestCommand[]>;
  captureCallsites(on: boolean): void;
  dispose(): void;
}

export interface ScriptSandbox {
  readonly options: Required<SandboxOptions>;
  instantiate(script: CompiledScript, run: InstantiateOptions): Promise<ScriptHandle>;
  /** Heap in use by the scripts' isolates, in bytes (the latest reading). */
  heapUsedBytes(): number;
  readonly liveRuns: number;
  /**
   * Scripts run in processes of their own, whose deaths are charged to the run executing: the
   * process serving runs never dies of a script, so its own deaths charge no run.
   */
  readonly supervised?: boolean;
  dispose(): void;
}

/**
 * The process running a run's script died: the run's instance is gone, and so is every other
 * instance of that process. `executing` is true for the one run whose script was running at that
 * moment (a death is charged to it alone); the others are loaded again in a fresh process.
 */
export class SandboxLost extends RewindError {
  override readonly name = "SandboxLost";
  constructor(
    readonly runId: string | undefined,
    readonly executing: boolean,
    /** What the process said as it died (how it ended, V8's fatal line). */
    readonly why: string,
  ) {
    super(
      "SANDBOX_ERROR",
      executing
        ? `The run's script was executing when ${why}: load the run again in a fresh sandbox process`
        : `The run's sandbox process ended (${why}) while another run executed: load the run again`,
    );
  }
}
