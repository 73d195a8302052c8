import { limitDefaults, type Limits } from "@rewind/core";
import type { IncomingEvent, RunEngine } from "@rewind/journal";
import type { ScriptHandle } from "@rewind/sandbox";
import type { ActivationRecord, InboxItem, Lease, RunAppend, RunStatus } from "@rewind/store";
import { forgetRunTrace } from "@rewind/telemetry";
import { RunUsage } from "./run-limits.js";

/** A run whose sandbox is alive in this process: its next event needs no replay. */
export class HotRun {
  /** Outcomes of this run's calls, waiting to be journaled (in the order they arrived). */
  readonly outcomes: IncomingEvent[] = [];
  /** In-memory wake-ups for its timers (the rows in the store are the truth). */
  readonly timerHandles = new Map<number, NodeJS.Timeout>();
  committedSeq: number;
  /** The status the store holds, so a change with no new entry is still recorded. */
  storedStatus: RunStatus | undefined;
  lastActive = Date.now();
  dropped = false;
  /** An activation is already queued for this run's outcomes: one is enough. */
  wakePending = false;
  /** Loaded cold and nothing journaled since: the store counts this load as an attempt. */
  attemptOpen = true;
  /** Its load ran again calls journaled without an outcome: that load counts as an attempt. */
  rerunCalls = false;
  /**
   * Run at once from its first ring, its lease not yet taken: its first commit takes it, or is
   * refused with nothing written (RunAppend.claim). Cleared once a commit was made.
   */
  claim: RunAppend["claim"];
  /** Its last commit handed the lease back (it ended with nothing in flight). */
  leaseReleased = false;
  /** The inbox as the cold load read it: handled by the first activation, then read afresh. */
  loadedInbox: InboxItem[] | undefined;
  /**
   * The activation under way, until its first commit records it (rw_activations, for the
   * projections): a cold load, or a hot one rung from outside. Outcomes of its own calls
   * continue the activation that made them: no row of their own.
   */
  activation: ActivationRecord | undefined;
  /** What its journal holds so far, against its namespace's limits (counted at each commit). */
  usage = new RunUsage();
  /** Its namespace's limits, as read when it was loaded. */
  limits: Limits = limitDefaults({});
  namespace = "";

  constructor(
    readonly runId: string,
    readonly toolset: string,
    readonly engine: RunEngine,
    readonly instance: ScriptHandle,
    public lease: Lease,
    committedSeq: number,
  ) {
    this.committedSeq = committedSeq;
  }

  get status(): RunStatus {
    if (this.engine.outcome !== undefined) return this.engine.outcome;
    return this.engine.inFlightCalls().length > 0 ? "running" : "waiting";
  }

  /** Ended, with no call still in flight: nothing more will be appended to its journal. */
  get finished(): boolean {
    return this.engine.outcome !== undefined && this.engine.inFlightCalls().length === 0;
  }

  /** Idle: nothing in flight, nothing waiting to be journaled: safe to evict. */
  get idle(): boolean {
    return this.outcomes.length === 0 && this.engine.inFlightCalls().length === 0;
  }

  dispose(): void {
    if (this.dropped) return; // dropped once already (a failed load after a failed step)
    this.dropped = true;
    for (const handle of this.timerHandles.values()) clearTimeout(handle);
    this.timerHandles.clear();
    this.instance.dispose();
    forgetRunTrace(this.runId);
  }
}
