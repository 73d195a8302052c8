import type { ErrorData, Json, JournalEntry, RunStartedEntry, RunStatus } from "@rewind/core";
import type {
  EpochRunCount,
  NewQuarantineRequest,
  QuarantineCount,
  QuarantineRequest,
  QuarantinedRun,
} from "./quarantine.js";
import type { PublishedToolset, ToolsetDescription } from "./toolsets.js";
import type { NamespaceLimits } from "./limits.js";
import type { CodecSetting } from "./codec-settings.js";
import type { CapturePolicy, CaptureRules } from "./capture-policies.js";
import type { TokenGrant, TokenInfo } from "./tokens.js";
import type { LiveWorker } from "./workers.js";
import type { EpochCheck, EpochCheckReport, EpochMove, NewEpochCheck } from "./epoch-moves.js";
import type { ProjectedRun, ProjectionCursor, ProjectionWindow } from "./projections.js";
import type { WebhookRows } from "./webhooks.js";

export type { RunStatus };
export const ENDED_STATUSES: ReadonlySet<RunStatus> = new Set(["completed", "failed", "cancelled"]);

/** A client's key for a run's start, and the digest of what that start asked for. */
export interface StartKey {
  key: string;
  digest: string;
}

export type CreateRunOutcome =
  /** `inClear`: its run.started row holds the input in the clear (no seal, not stored apart). */
  | { created: true; inClear: boolean }
  /** A start key's run exists: its id and request digest. */
  | { created: false; runId: string; digest: string }
  /** Over the namespace's start limits: nothing stored; its load as counted. */
  | { created: false; refused: StartLoad };

/**
 * What a start counts against: the namespace's open runs, and its starts in the last second
 * (estimated from its start counters: migrations/0019).
 */
export interface StartLoad {
  inFlight: number;
  lastSecond: number;
}

/** The limits a start is held to (the namespace's runsInFlight and startsPerSecond). */
export interface StartLimits {
  runsInFlight: number;
  startsPerSecond: number;
}

/** A value left out of a journal page: its reference and its size as stored (bytes). */
export interface DeferredValue {
  ref: string;
  size: number;
}

export interface StoredScript {
  hash: string;
  entry: string;
  code: string;
  sourceMap: string;
}

export interface RunRecord {
  id: string;
  namespace: string;
  scriptHash: string;
  toolset: string;
  epoch: number;
  status: RunStatus;
  parent?: { runId: string; seq: number };
  lastSeq: number;
  result?: Json;
  error?: ErrorData;
  ttlMs: number;
  createdAt: Date;
  updatedAt: Date;
  endedAt?: Date;
  expiresAt?: Date;
  /** The script's entry file name (`order.ts`), where the store read it with the run. */
  script?: string;
  /** The owner of a live lease on the run (a worker holding it hot), if any. */
  holder?: string;
  /** How many times a worker took the run's lease (its lease token): see RunRoute.leases. */
  leases: number;
  /** The W3C traceparent of the request that started the run: its trace is the run's. */
  traceparent?: string;
}

/** Where a run's next activation should go: its epoch's queue, or the worker holding it hot. */
export interface RunRoute {
  runId: string;
  epoch: number;
  holder?: string;
  /**
   * How many times a worker took the run's lease when it was rung. Rings of one generation are
   * one activation; a ring after the run changed hands is a new one, not a duplicate of the
   * activation a dead worker left behind (its queue may hold that one for a while).
   */
  leases?: number;
}

/** The right to append to one run's journal: held by one owner; the token fences stale owners. */
export interface Lease {
  runId: string;
  owner: string;
  token: number;
  /**
   * The run's namespace, as the store read it with the lease: appends seal values by its payload
   * codec setting (absent on a lease made by hand: the store looks it up).
   */
  namespace?: string;
  /** The journal's last seq when the lease was taken. */
  lastSeq: number;
  /**
   * Cold loads (this one included) since the run last journaled progress or was handed back
   * cleanly: how many times in a row it may have taken its process down.
   */
  attempts: number;
  /**
   * Deaths of a sandbox process while this run was the one executing in it, all at the journal's
   * end `deathSeq` (a death at a later seq starts the count again), and what the last one said.
   * Absent on a lease from acquireLease.
   */
  deaths?: { count: number; seq: number; cause: string | null };
}

/** Entries to append to one run's journal, fenced by its lease and by the seq they follow. */
export interface RunAppend {
  lease: Lease;
  afterSeq: number;
  entries: readonly JournalEntry[];
  status: RunStatus;
  /** Inbox items these entries consumed, with the seq of the entry each became. */
  inboxConsumed?: readonly { id: number; seq: number }[];
  /**
   * The caller knows the run's row already says what this append would write (the same status):
   * the store may skip the row. The hot step of a run (a call's result and
   * the next call) then costs one INSERT.
   */
  runRowUnchanged?: boolean;
  /** Hand the lease back in the same commit (the run ended with no call in flight). */
  releaseLease?: boolean;
  /** This append is the first commit of an activation: its row goes in the same commit. */
  activation?: ActivationRecord;
  /**
   * A new run's first commit, made before its lease was taken (FirstActivation.started): it
   * takes the lease for `lease.owner` with token FIRST_CLAIM_TOKEN, only while no one ever took
   * it (token 0), the run is queued in the epoch it started in, its journal is its start alone,
   * exactly `started` as stored (a ring forged in Redis runs nothing of its own), and nothing
   * waits in its inbox; refused ("lease_lost") otherwise, and then nothing of it is written.
   */
  claim?: { started: RunStartedEntry; ttlMs: number };
}

/** The token of a lease taken by a first commit's claim: the first any holder of the run gets. */
export const FIRST_CLAIM_TOKEN = 1;

/** What the projections keep of one activation (rw_activations, docs/traces.md). */
export interface ActivationRecord {
  kind: "hot" | "cold";
  /** Journal entries replayed before it went live (0 for a hot one). */
  replayed: number;
  /** The lease's attempt count. */
  attempt: number;
  /** From the ring to a worker taking it, when it came through the queue. */
  scheduleToStartMs?: number;
  /** Wall time (ms) when the worker took it. */
  startedAt: number;
}

export type AppendOutcome = "ok" | "lease_lost";

export interface LoadedRun {
  lease: Lease;
  record: RunRecord;
  journal: JournalEntry[];
  /** Signals and cancels not yet journaled, oldest first. */
  inbox: InboxItem[];
}

export interface InboxItem {
  id: number;
  runId: string;
  kind: "signal" | "cancel";
  name: string | null;
  payload: Json;
}

export interface DueTimer {
  runId: string;
  timerSeq: number;
  dueAt: number;
}

/** Which runs of a namespace to list: every field given narrows the list (run-list.ts). */
export interface RunsQuery {
  namespace: string;
  /** One status, or any of several. */
  status?: RunStatus | readonly RunStatus[];
  /** The script's entry file name (`order.ts`) or its hash (`sha256:…`). */
  script?: string;
  toolset?: string;
  epoch?: number;
  /** Created at or after this instant. */
  createdFrom?: Date;
  /** Created before this instant. */
  createdTo?: Date;
  /** Only forks of this run. */
  parent?: string;
  /** true: only forks (runs with a parent); false: only runs that are not forks. */
  fork?: boolean;
  /** Text the run's id or its error's message contains (case-insensitive). */
  text?: string;
}

export interface ListRunsFilter extends RunsQuery {
  /** newest (default) or oldest first: run ids sort by creation time. */
  order?: "newest" | "oldest";
  limit?: number;
  /** Runs created before this run (by id order), for paging newest first. */
  before?: string;
  /** Runs created after this run (by id order), for paging oldest first. */
  after?: string;
}

/**
 * Everything Rewind keeps. Two backends, one implementation: Postgres through `pg` and the
 * embedded PGlite; both pass test/conformance.ts.
 */
export interface Store {
  readonly kind: "postgres" | "pglite";
  close(): Promise<void>;

  ensureNamespace(name: string): Promise<void>;
  /**
   * A new API token for a namespace with these scopes (default: read, run, operate); only its
   * hash is stored, so it is returned once. Its id (for lists and revokes) is `tokenIdOf(token)`.
   */
  createToken(namespace: string, label: string, scopes?: readonly string[]): Promise<string>;
  /** The namespace a token grants, or undefined for an unknown or revoked token. */
  authenticate(token: string): Promise<string | undefined>;
  /** What a token grants (namespace, label, scopes), or undefined for an unknown or revoked one. */
  grant(token: string): Promise<TokenGrant | undefined>;
  /** The limits a namespace set for itself (null: the default of the enforcing process). */
  getLimits(namespace: string): Promise<NamespaceLimits>;
  /** A namespace's payload codec setting, and the key ids this process holds (docs/codec.md). */
  getCodec(namespace: string): Promise<CodecSetting>;
  /**
   * Switches a namespace's payload codec on or off (new values only: what is stored stays as it
   * is, readable either way). On is refused where this process holds no keys.
   */
  setCodec(namespace: string, enabled: boolean): Promise<CodecSetting>;
  /** A namespace's capture policy: its namespace-wide one (toolset null) or a toolset's own. */
  getCapturePolicy(namespace: string, toolset: string | null): Promise<CapturePolicy>;
  /** Replaces a capture policy; new entries only: recorded ones are never rewritten. */
  setCapturePolicy(
    namespace: string,
    toolset: string | null,
    rules: CaptureRules,
  ): Promise<CapturePolicy>;
  /**
   * The capture rules a run of `toolset` in `namespace` commits under (the namespace-wide policy
   * and the toolset's own), as read within the last CAPTURE_POLICY_CACHE_MS.
   */
  captureRules(namespace: string, toolset: string): Promise<CaptureRules[]>;
  /**
   * The first entry of a run's journal whose values a capture policy redacted, with the rules
   * that did: where the run stops being strictly replayable (docs/capture-policy.md).
   */
  firstRedacted(runId: string): Promise<{ seq: number; rules: string[] } | undefined>;
  /** Sets some of a namespace's limits (null: back to the default); answers them all. */
  setLimits(namespace: string, changes: Partial<NamespaceLimits>): Promise<NamespaceLimits>;
  /** A namespace's tokens, revoked ones too (every namespace's without one): never a plaintext. */
  listTokens(namespace?: string): Promise<TokenInfo[]>;
  /** Revokes a token by its id, within `namespace` when given; NOT_FOUND for an unknown id. */
  revokeToken(id: string, namespace?: string): Promise<TokenInfo>;

  /**
   * Stores a script in a namespace. Scripts belong to their namespace: another namespace's copy
   * of the same code (with its own entry and source map) is a different row, never shared.
   */
  putScript(namespace: string, script: StoredScript): Promise<void>;
  /** A script of this namespace; another namespace's script of the same hash is not found. */
  getScript(namespace: string, hash: string): Promise<StoredScript | undefined>;

  /**
   * Stores a new run (status queued) with its journal's first entry, `run.started`. With
   * `idempotency`, unless a run of the namespace already has that key: then nothing is stored and
   * that run's id and request digest are answered (the caller compares the digests). With
   * `limits`, only while the namespace's load is under them, counted in the same round trip as
   * the insert where it can be: else nothing is stored and the load is answered. Every start
   * admitted counts against `startsPerSecond`, a repeat of a keyed one too.
   */
  createRun(run: {
    started: RunStartedEntry;
    ttlMs: number;
    limits?: StartLimits;
    idempotency?: StartKey;
    /** The W3C traceparent of the request that started the run (validated by the caller). */
    traceparent?: string;
  }): Promise<CreateRunOutcome>;
  getRun(id: string): Promise<RunRecord | undefined>;
  listRuns(filter: ListRunsFilter): Promise<RunRecord[]>;
  /** How many runs the query finds, by status (its own `status` ignored): the list's counts. */
  countRuns(query: RunsQuery): Promise<Partial<Record<RunStatus, number>>>;
  /** The entries from `fromSeq` on, in seq order: at most `limit` of them when given (a page). */
  readJournal(runId: string, fromSeq?: number, limit?: number): Promise<JournalEntry[]>;
  /**
   * What a follower of the run needs after a change notice, in one statement and so one snapshot:
   * the run's status and its entries from `fromSeq` on. A run read as ended has every entry in
   * the answer (they committed with its status, or before it). Undefined: there is no such run.
   */
  readJournalFollowing(
    runId: string,
    fromSeq: number,
  ): Promise<{ status: RunStatus; entries: JournalEntry[] } | undefined>;
  /**
   * The same page with the values larger than `above` (bytes as stored) not read: each is null
   * in its entry and named in `deferred` by `seq.field` with its ref and size, to be read on
   * demand with readRunValue (a viewer need not load every blob of a run to list its journal).
   */
  readJournalDeferred(
    runId: string,
    fromSeq: number,
    limit: number | undefined,
    above: number,
  ): Promise<{ entries: JournalEntry[]; deferred: Record<string, DeferredValue> }>;
  /** One value of the run by its ref, or undefined when the run holds no such value. */
  readRunValue(runId: string, ref: string): Promise<Json | undefined>;

  /**
   * Takes the run's lease if it is free, expired, or already this owner's (a new token each time).
   * `steal` takes it regardless: for a process that knows every other owner is gone.
   */
  acquireLease(
    runId: string,
    owner: string,
    ttlMs: number,
    options?: {
      steal?: boolean;
      /** Only if the run's epoch is one of these: a worker never touches runs it cannot replay. */
      epochs?: readonly number[];
    },
  ): Promise<Lease | undefined>;
  /**
   * A cold load in one round trip: takes the lease as acquireLease does and, if it got it, returns
   * the run, its journal and its pending inbox with it.
   */
  loadRun(
    runId: string,
    owner: string,
    ttlMs: number,
    options?: { steal?: boolean; epochs?: readonly number[] },
  ): Promise<LoadedRun | undefined>;
  renewLeases(owner: string, runIds: readonly string[], ttlMs: number): Promise<void>;
  /** Hands the run back (its attempts count restarts). */
  releaseLease(lease: Lease): Promise<void>;
  /** The run was loaded and is fine (it just waits): this load does not count as an attempt. */
  clearAttempts(lease: Lease): Promise<void>;
  /**
   * The sandbox process died while this run was executing in it, its journal ending at `seq`:
   * counted before the run is loaded again (fenced by the lease). Returns the count at that seq.
   */
  recordDeath(lease: Lease, seq: number, cause: string): Promise<number>;
  /** Appends for many runs in one commit; each run's append is fenced on its own. */
  commit(appends: readonly RunAppend[]): Promise<AppendOutcome[]>;

  /** An outside event for a run; only the run's owner turns it into a journal entry. */
  addInbox(
    runId: string,
    item: { kind: "signal" | "cancel"; name?: string; payload?: Json },
  ): Promise<number>;
  pendingInbox(runId: string): Promise<InboxItem[]>;
  /** Open runs with inbox items not yet journaled: what a reconciler rings again. */
  runsWithPendingInbox(limit: number): Promise<string[]>;
  dueTimers(now: number, limit: number): Promise<DueTimer[]>;
  /**
   * Runs no live owner is moving: queued or running, with no lease or an expired one, untouched
   * for `idleMs` (their owner died or handed them back), or for `unstartedMs` if no worker ever
   * took them (their first ring may just be waiting its turn in the queue). What a reconciler
   * rings again.
   */
  strandedRuns(limit: number, after: { idleMs: number; unstartedMs: number }): Promise<string[]>;
  /** The epoch and live lease holder of each run: how the doorbell routes it. */
  routes(runIds: readonly string[]): Promise<RunRoute[]>;
  /** Runs that have not ended: what a reconciler makes sure someone is working on. */
  openRuns(limit: number, afterId?: string): Promise<{ id: string; status: RunStatus }[]>;

  /** Deletes runs whose TTL has passed, and values no run refers to any more. */
  deleteExpired(now: Date): Promise<{ runs: number; values: number }>;

  // ---- quarantine (quarantine.ts)

  /** Who holds an API token (its namespace and label), or undefined for an unknown or revoked one. */
  identify(token: string): Promise<{ namespace: string; label: string } | undefined>;
  /** An operator's request about a quarantined run; only the quarantine service acts on it. */
  addQuarantineRequest(runId: string, request: NewQuarantineRequest): Promise<number>;
  /** Requests not yet acted on, oldest first (about these runs, or any). */
  pendingQuarantineRequests(
    limit: number,
    runIds?: readonly string[],
  ): Promise<QuarantineRequest[]>;
  /** Marks requests that no longer apply as handled, with no journal entry (no lease needed). */
  dismissQuarantineRequests(runId: string, ids: readonly number[], seq: number): Promise<void>;
  /** Appends (a run.released entry) and moves the run to `epoch`, in one fenced commit. */
  commitRelease(append: RunAppend, epoch: number): Promise<AppendOutcome>;
  /** The namespace's quarantined runs, newest first, each with its latest report. */
  listQuarantined(filter: Omit<ListRunsFilter, "status">): Promise<QuarantinedRun[]>;
  /** Quarantined runs by epoch and reason, across namespaces: the operators' gauge. */
  quarantineCounts(): Promise<QuarantineCount[]>;
  /** Runs that have not ended, by epoch and status (of one namespace, or all). */
  openRunsByEpoch(namespace?: string): Promise<EpochRunCount[]>;

  // ---- moving runs between epochs (epoch-moves.ts)

  /** An operator's request to check (and move) a namespace's runs of one epoch onto another. */
  requestEpochCheck(check: NewEpochCheck): Promise<EpochCheck>;
  /** A worker of one of `epochs` takes the oldest check onto it nobody is working on. */
  takeEpochCheck(
    owner: string,
    epochs: readonly number[],
    staleMs: number,
  ): Promise<EpochCheck | undefined>;
  touchEpochCheck(id: number, owner: string): Promise<void>;
  finishEpochCheck(id: number, owner: string, report: EpochCheckReport): Promise<void>;
  getEpochCheck(namespace: string, id: number): Promise<EpochCheck | undefined>;
  openRunsOfEpoch(
    namespace: string,
    epoch: number,
    limit: number,
    afterId?: string,
  ): Promise<string[]>;
  /** Moves a run checked at `checkedSeq` under `lease` (compare-and-set, recorded with it). */
  moveRunEpoch(
    lease: Lease,
    move: { from: number; to: number; checkedSeq: number; by: string; checkId?: number },
  ): Promise<"ok" | "changed">;
  epochMoves(runId: string): Promise<EpochMove[]>;
  // ---- projections (projections.ts, docs/traces.md)

  /**
   * The committed rows of the transactions from `below` on, whole, up to the horizon; with
   * `kinds`, only the rows of those kinds and no activations (the window's bounds are the same).
   */
  projectionWindow(
    below: bigint,
    limit: number,
    kinds?: ReadonlySet<string>,
  ): Promise<ProjectionWindow>;
  /**
   * A run's commit times and activations (from `fromSeq` on: a reader that holds the rest asks
   * only for what is new) and traceparent, or undefined if it is gone.
   */
  projectedRun(runId: string, fromSeq?: number): Promise<ProjectedRun | undefined>;
  /**
   * Many runs' journals and projection data at once, each from its own seq on (a projector's
   * window: a few queries for all its runs); runs that are gone are left out.
   */
  projectedRuns(
    wanted: readonly { runId: string; fromSeq: number }[],
  ): Promise<Map<string, { run: ProjectedRun; journal: JournalEntry[] }>>;
  /** A sink's cursor (made at the start of history the first time). */
  ensureProjectionCursor(sink: string): Promise<bigint>;
  /** Moves a sink's cursor forward from `from` after delivering; false if it was not at `from`. */
  advanceProjectionCursor(
    sink: string,
    from: bigint,
    to: bigint,
    delivered: number,
  ): Promise<boolean>;
  /** Every sink's cursor with its lag and the rows it has not delivered (a read of the backlog). */
  projectionCursors(): Promise<ProjectionCursor[]>;
  /**
   * Every sink's lag alone: the commit time of the first row it has not delivered (absent when
   * caught up). One index probe a sink, whatever the backlog: what a scrape of /metrics reads.
   */
  projectionLags(): Promise<{ sink: string; oldestPending?: Date }[]>;
  /** Runs with journal rows committed since then (a backfill's selection). */
  runsCommittedSince(since: Date): Promise<string[]>;

  // ---- webhooks (webhooks.ts, docs/webhooks.md)

  /** Endpoints, their deliveries (made with the webhook sink's cursor) and the attempts log. */
  readonly webhooks: WebhookRows;

  // ---- workers (workers.ts)

  /** A worker is alive and runs these epochs: at start, then every few seconds. */
  workerSeen(owner: string, epochs: readonly number[]): Promise<void>;
  /** A worker stopped gracefully. */
  workerGone(owner: string): Promise<void>;
  /** The workers seen in the last `seenWithinMs`, with their epochs. */
  liveWorkers(seenWithinMs: number): Promise<LiveWorker[]>;

  // ---- toolsets (toolsets.ts)

  /** A worker describes the toolsets it runs, at start-up: the latest description of a name wins. */
  publishToolsets(toolsets: readonly ToolsetDescription[], publisher: string): Promise<void>;
  /** The latest description of a toolset, or undefined if no worker has published it. */
  getToolset(name: string): Promise<PublishedToolset | undefined>;
}
