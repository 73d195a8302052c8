import { and, eq } from "drizzle-orm";
import {
  DEFAULT_SCOPES,
  RewindError,
  canonicalize,
  type Json,
  type JournalEntry,
} from "@rewind/core";
import type { BlobStore } from "./blobs.js";
import { isKeyedDigest, matchesKeyedDigest, openText, type PayloadCodec } from "./codec.js";
import { CodecSettings, type CodecSetting } from "./codec-settings.js";
import { CapturePolicies, type CapturePolicy, type CaptureRules } from "./capture-policies.js";
import {
  decodeEntry,
  encodeEntry,
  encodeValue,
  refOf,
  valueFieldOf,
  type EntryRow,
  type Seal,
} from "./encoding.js";
import * as leases from "./leases.js";
import type { LeaseOptions } from "./leases.js";
import * as projections from "./projections.js";
import { WebhookRows } from "./webhooks.js";
import type { ProjectedRun, ProjectionCursor, ProjectionWindow } from "./projections.js";
import * as quarantine from "./quarantine.js";
import * as limits from "./limits.js";
import type { NamespaceLimits } from "./limits.js";
import * as tokens from "./tokens.js";
import type { TokenGrant, TokenInfo } from "./tokens.js";
import * as runList from "./run-list.js";
import * as toolsets from "./toolsets.js";
import * as workers from "./workers.js";
import * as epochMoves from "./epoch-moves.js";
import type { EpochCheckReport, NewEpochCheck } from "./epoch-moves.js";
import type {
  EpochRunCount,
  NewQuarantineRequest,
  QuarantineCount,
  QuarantineRequest,
  QuarantinedRun,
} from "./quarantine.js";
import { commitPlainSteps, encodeAppend, plainStep } from "./appends.js";
import * as schema from "./schema.js";
import type { SqlClient } from "./sql.js";
import { ValueRows } from "./values.js";
import type {
  AppendOutcome,
  CreateRunOutcome,
  DeferredValue,
  StartKey,
  DueTimer,
  InboxItem,
  Lease,
  ListRunsFilter,
  RunsQuery,
  RunAppend,
  RunRecord,
  RunRoute,
  LoadedRun,
  RunStatus,
  Store,
  StoredScript,
  StartLimits,
} from "./store.js";

/** The store over SQL: the same code for Postgres and PGlite. */
export class SqlStore implements Store {
  private readonly scripts = new Map<string, StoredScript>();
  /** When this process last counted each namespace's open runs (see InFlightCounts). */
  private readonly inFlightCounts = new limits.InFlightCounts();
  private readonly values: ValueRows;
  private readonly codecs: CodecSettings;
  private readonly capture: CapturePolicies;
  private readonly tokens = new Map<string, { grant: TokenGrant; until: number }>();
  readonly webhooks: WebhookRows;

  constructor(
    private readonly sql: SqlClient,
    private readonly blobs: BlobStore,
    /** The payload codec's keys (REWIND_CODEC_KEYS), if this process has any (codec.ts). */
    codec?: PayloadCodec,
  ) {
    this.values = new ValueRows(sql, blobs, codec);
    this.codecs = new CodecSettings(sql, codec);
    this.capture = new CapturePolicies(sql);
    this.webhooks = new WebhookRows(sql);
  }

  get kind() {
    return this.sql.kind;
  }

  close(): Promise<void> {
    return this.sql.close();
  }

  async ensureNamespace(name: string): Promise<void> {
    await this.sql.db.insert(schema.namespaces).values({ name }).onConflictDoNothing();
  }

  async createToken(
    namespace: string,
    label: string,
    scopes: readonly string[] = DEFAULT_SCOPES,
  ): Promise<string> {
    await this.ensureNamespace(namespace);
    return tokens.createToken(this.sql, namespace, label, scopes);
  }

  async authenticate(token: string): Promise<string | undefined> {
    return (await this.grant(token))?.namespace;
  }

  async grant(token: string): Promise<TokenGrant | undefined> {
    // Every request asks: a granted token is remembered for a few seconds (a token revoked
    // through another process stops working within TOKEN_CACHE_MS; through this one, at once).
    const hash = tokens.hashToken(token);
    const known = this.tokens.get(hash);
    if (known !== undefined && known.until > Date.now()) return known.grant;
    const grant = await tokens.lookUpToken(this.sql, token);
    if (grant === undefined) this.tokens.delete(hash);
    else {
      if (this.tokens.size >= 1000) this.tokens.clear();
      this.tokens.set(hash, { grant, until: Date.now() + TOKEN_CACHE_MS });
    }
    return grant;
  }

  getLimits(namespace: string): Promise<NamespaceLimits> {
    return limits.getLimits(this.sql, namespace);
  }

  async setLimits(namespace: string, changes: Partial<NamespaceLimits>): Promise<NamespaceLimits> {
    await this.ensureNamespace(namespace);
    return limits.setLimits(this.sql, namespace, changes);
  }

  getCodec(namespace: string): Promise<CodecSetting> {
    return this.codecs.get(namespace);
  }

  async setCodec(namespace: string, enabled: boolean): Promise<CodecSetting> {
    await this.ensureNamespace(namespace);
    return this.codecs.set(namespace, enabled);
  }

  getCapturePolicy(namespace: string, toolset: string | null): Promise<CapturePolicy> {
    return this.capture.get(namespace, toolset);
  }

  async setCapturePolicy(
    namespace: string,
    toolset: string | null,
    rules: CaptureRules,
  ): Promise<CapturePolicy> {
    await this.ensureNamespace(namespace);
    return this.capture.set(namespace, toolset, rules);
  }

  captureRules(namespace: string, toolset: string): Promise<CaptureRules[]> {
    return this.capture.applying(namespace, toolset);
  }

  async firstRedacted(runId: string): Promise<{ seq: number; rules: string[] } | undefined> {
    const rows = await this.sql.query<{ seq: number; redacted: string[] | string }>(
      `SELECT seq, body->'redacted' AS redacted FROM rw_journal
       WHERE run_id = $1 AND body->'redacted' IS NOT NULL ORDER BY seq LIMIT 1`,
      [runId],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    const rules =
      typeof row.redacted === "string" ? (JSON.parse(row.redacted) as string[]) : row.redacted;
    return { seq: Number(row.seq), rules };
  }

  /** How values appended under this lease are sealed: by its namespace's codec setting. */
  private async sealOf(lease: Lease): Promise<Seal> {
    const namespace = lease.namespace ?? (await this.namespaceOf(lease.runId));
    return namespace === undefined ? undefined : this.codecs.sealFor(namespace);
  }

  private async namespaceOf(runId: string): Promise<string | undefined> {
    const rows = await this.sql.query<{ namespace: string }>(
      "SELECT namespace FROM rw_runs WHERE id = $1",
      [runId],
    );
    return rows[0]?.namespace;
  }

  listTokens(namespace?: string): Promise<TokenInfo[]> {
    return tokens.listTokens(this.sql, namespace);
  }

  async revokeToken(id: string, namespace?: string): Promise<TokenInfo> {
    const revoked = await tokens.revokeToken(this.sql, id, namespace);
    this.tokens.clear();
    return revoked;
  }

  async putScript(namespace: string, script: StoredScript): Promise<void> {
    const key = scriptKey(namespace, script.hash);
    if (this.scripts.has(key)) return; // stored by hash: what is stored never changes
    await this.ensureNamespace(namespace);
    await this.sql.db
      .insert(schema.scripts)
      .values({ namespace, ...script })
      .onConflictDoNothing();
    this.rememberScript(key, script);
  }

  async getScript(namespace: string, hash: string): Promise<StoredScript | undefined> {
    const key = scriptKey(namespace, hash);
    const known = this.scripts.get(key);
    if (known !== undefined) return known;
    const rows = await this.sql.db
      .select({
        hash: schema.scripts.hash,
        entry: schema.scripts.entry,
        code: schema.scripts.code,
        sourceMap: schema.scripts.sourceMap,
      })
      .from(schema.scripts)
      .where(and(eq(schema.scripts.namespace, namespace), eq(schema.scripts.hash, hash)));
    if (rows[0] !== undefined) this.rememberScript(key, rows[0]);
    return rows[0];
  }

  /**
   * Scripts are immutable (stored by the hash of their code): the last few used stay here, by
   * namespace and hash, since each namespace has its own copy.
   */
  private rememberScript(key: string, script: StoredScript): void {
    this.scripts.delete(key);
    this.scripts.set(key, script);
    if (this.scripts.size > 64) this.scripts.delete(this.scripts.keys().next().value!);
  }

  async createRun({
    started,
    ttlMs,
    limits: startLimits,
    idempotency: requested,
    traceparent: traceparentHeader,
  }: {
    started: JournalEntry & { kind: "run.started" };
    ttlMs: number;
    limits?: StartLimits;
    idempotency?: StartKey;
    traceparent?: string;
  }): Promise<CreateRunOutcome> {
    const seal = await this.codecs.sealFor(started.namespace);
    const { row, value } = encodeEntry(started, seal);
    const inClear = value === undefined && seal === undefined;
    // A sealed namespace keeps no plain hash of a start's request (its input) either.
    const idempotency =
      requested !== undefined && seal !== undefined
        ? { ...requested, digest: this.values.codec!.keyedDigest(requested.digest) }
        : requested;
    const traceparent = traceparentHeader ?? null;
    const run = [
      started.runId,
      started.namespace,
      started.scriptHash,
      started.toolset,
      started.epoch,
      started.parent?.runId ?? null,
      started.parent?.seq ?? null,
      ttlMs,
    ];
    // The admission's parameters (migrations/0019): the last count of open runs that bounds
    // this start's, and the limits (null: none).
    const sentAt = Date.now();
    const admission = [
      this.inFlightCounts.bound(started.namespace, startLimits, sentAt),
      startLimits?.runsInFlight ?? null,
      startLimits?.startsPerSecond ?? null,
    ];
    const admitted = (answer: limits.AdmissionRow): boolean => {
      if (answer.in_flight !== null)
        this.inFlightCounts.record(started.namespace, Number(answer.in_flight), sentAt);
      return answer.admitted;
    };
    const refused = (answer: limits.AdmissionRow): CreateRunOutcome => ({
      created: false,
      refused: limits.startLoadOf(answer, this.inFlightCounts.last(started.namespace)),
    });
    if (value === undefined) {
      // The usual case (the input fits inline): one statement, one round trip, admitted by the
      // namespace's start counters in it. With a start key, the run row goes in unless the key is
      // taken (the unique index decides, so a start and its retry racing make one run); only a
      // repeat reads the run that has the key. The journal's first entry goes in only if the run
      // row did. The foreign keys are checked at the statement's end, when the rows exist. Prepared
      // once per connection: the open runs' count, whose best plan depends on how many the
      // namespace has, is planned at each call of rw_admit_start.
      const keyed = idempotency !== undefined;
      const { rows } = await this.sql.execute<limits.AdmissionRow & { created: number }>(
        keyed ? "rw_create_keyed_run" : "rw_create_run",
        `WITH load AS (${limits.admitStartSql("$2", { last: "$13::bigint", runsInFlight: "$14::bigint", startsPerSecond: "$15::bigint" })}),
              namespace AS (INSERT INTO rw_namespaces (name) VALUES ($2) ON CONFLICT DO NOTHING),
              run AS (
                INSERT INTO rw_runs (id, namespace, script_hash, toolset, epoch, status, parent_id, parent_seq, ttl_ms, traceparent${keyed ? ", idempotency_key, request_digest" : ""})
                SELECT $1, $2, $3, $4, $5, 'queued', $6, $7, $8, $12${keyed ? ", $16, $17" : ""} FROM load WHERE admitted
                ${keyed ? "ON CONFLICT (namespace, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING" : ""}
                RETURNING id),
              journal AS (
                INSERT INTO rw_journal (run_id, seq, kind, at, callsite, body)
                SELECT id, 1, $9, $10, NULL, $11 FROM run RETURNING run_id)
         SELECT (SELECT count(*)::int FROM journal) AS created, in_flight, last_second, admitted FROM load`,
        [
          ...run,
          row.kind,
          row.at,
          JSON.stringify(row.body),
          traceparent,
          ...admission,
          ...(keyed ? [idempotency.key, idempotency.digest] : []),
        ],
      );
      const answer = rows[0]!;
      if (!admitted(answer)) return refused(answer);
      if (answer.created > 0) return { created: true, inClear };
      return this.keyedRun(started.namespace, requested!);
    }
    // A large input, stored apart: admitted first, in the transaction that stores it.
    const values = await this.values.prepare([value]);
    const outcome = await this.sql.transaction(async (tx): Promise<CreateRunOutcome | "taken"> => {
      const [answer] = await tx.query<limits.AdmissionRow>(
        limits.admitStartSql("$1", {
          last: "$2::bigint",
          runsInFlight: "$3::bigint",
          startsPerSecond: "$4::bigint",
        }),
        [started.namespace, ...admission],
      );
      if (!admitted(answer!)) return refused(answer!);
      await tx.query("INSERT INTO rw_namespaces (name) VALUES ($1) ON CONFLICT DO NOTHING", [
        started.namespace,
      ]);
      const inserted = await tx.query(
        `INSERT INTO rw_runs (id, namespace, script_hash, toolset, epoch, status, parent_id, parent_seq, ttl_ms, idempotency_key, request_digest, traceparent)
         VALUES ($1, $2, $3, $4, $5, 'queued', $6, $7, $8, $9, $10, $11)
         ON CONFLICT (namespace, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
         RETURNING id`,
        [...run, idempotency?.key ?? null, idempotency?.digest ?? null, traceparent],
      );
      if (inserted.length === 0) return "taken";
      await this.values.insert(tx, started.runId, values);
      await tx.query(
        "INSERT INTO rw_journal (run_id, seq, kind, at, callsite, body) VALUES ($1, 1, $2, $3, NULL, $4)",
        [started.runId, row.kind, row.at, JSON.stringify(row.body)],
      );
      return { created: true, inClear };
    });
    return outcome === "taken" ? this.keyedRun(started.namespace, requested!) : outcome;
  }

  /** The run a start key already names (a repeated start). */
  private async keyedRun(namespace: string, { key, digest }: StartKey): Promise<CreateRunOutcome> {
    const rows = await this.sql.query<{ id: string; request_digest: string }>(
      "SELECT id, request_digest FROM rw_runs WHERE namespace = $1 AND idempotency_key = $2",
      [namespace, key],
    );
    const found = rows[0];
    if (found === undefined)
      // Only if the run was deleted (its TTL) between the insert and this read: try again.
      throw new RewindError(
        "UNAVAILABLE",
        `The run started with idempotency key ${key} went away while it was looked up: retry the request`,
      );
    // Sealed, the stored digest is keyed: it answers the digest asked when that one matches.
    const stored = found.request_digest;
    const same = isKeyedDigest(stored) && matchesKeyedDigest(this.values.codec, stored, digest);
    return { created: false, runId: found.id, digest: same ? digest : stored };
  }

  getRun(id: string): Promise<RunRecord | undefined> {
    return runList.getRun(this.sql, this.values, id);
  }

  listRuns(filter: ListRunsFilter): Promise<RunRecord[]> {
    return runList.listRuns(this.sql, this.values, filter);
  }

  countRuns(query: RunsQuery): Promise<Partial<Record<RunStatus, number>>> {
    return runList.countRuns(this.sql, query);
  }

  /**
   * A run's journal rows from `fromSeq` (at most `limit`), each with the run's namespace: a sealed
   * value opens only as its namespace's.
   */
  private journalRows(runId: string, fromSeq: number, limit: number | undefined) {
    return this.sql.query<EntryRow & { namespace: string }>(
      `SELECT j.seq, j.kind, j.at, j.callsite, j.body, r.namespace
         FROM rw_journal j JOIN rw_runs r ON r.id = j.run_id
        WHERE j.run_id = $1 AND j.seq >= $2 ORDER BY j.seq${limit === undefined ? "" : " LIMIT $3"}`,
      limit === undefined ? [runId, fromSeq] : [runId, fromSeq, limit],
    );
  }

  async readJournal(runId: string, fromSeq = 1, limit?: number): Promise<JournalEntry[]> {
    const rows = await this.journalRows(runId, fromSeq, limit);
    return this.entriesOf(rows, rows[0]?.namespace ?? "");
  }

  /** Journal rows of one run as entries, their values read (a sealed one opens as `namespace`'s). */
  private async entriesOf(rows: readonly EntryRow[], namespace: string): Promise<JournalEntry[]> {
    const refs = [...new Set(rows.map(refOf).filter((ref): ref is string => ref !== undefined))];
    const values = await this.values.load(refs, namespace);
    return rows.map(({ seq, kind, at, callsite, body }) =>
      decodeEntry(
        { seq, kind, at, callsite, body },
        (ref) => values.get(ref) as Json,
        this.values.codec,
        namespace,
      ),
    );
  }

  async readJournalFollowing(
    runId: string,
    fromSeq: number,
  ): Promise<{ status: RunStatus; entries: JournalEntry[] } | undefined> {
    // From the run, so a run with nothing new still answers its status (one row, entry null).
    // Named: read at each commit a streaming client hears of, by the two primary keys.
    const { rows } = await this.sql.execute<
      { status: RunStatus; namespace: string } & { [K in keyof EntryRow]: EntryRow[K] | null }
    >(
      "rw_read_journal_following",
      `SELECT r.status, r.namespace, j.seq, j.kind, j.at, j.callsite, j.body
         FROM rw_runs r LEFT JOIN rw_journal j ON j.run_id = r.id AND j.seq >= $2
        WHERE r.id = $1 ORDER BY j.seq`,
      [runId, fromSeq],
    );
    const first = rows[0];
    if (first === undefined) return undefined;
    const found = rows.filter((row): row is typeof row & EntryRow => row.seq !== null);
    return { status: first.status, entries: await this.entriesOf(found, first.namespace) };
  }

  async readJournalDeferred(
    runId: string,
    fromSeq: number,
    limit: number | undefined,
    above: number,
  ): Promise<{ entries: JournalEntry[]; deferred: Record<string, DeferredValue> }> {
    const rows = await this.journalRows(runId, fromSeq, limit);
    const namespace = rows[0]?.namespace ?? "";
    const refs = [...new Set(rows.map(refOf).filter((ref): ref is string => ref !== undefined))];
    const sizes = await this.values.sizes(refs);
    const large = new Set(refs.filter((ref) => (sizes.get(ref) ?? 0) > above));
    const values = await this.values.load(
      refs.filter((ref) => !large.has(ref)),
      namespace,
    );
    const deferred: Record<string, DeferredValue> = {};
    const entries = rows.map(({ namespace: _, ...row }) => {
      const ref = refOf(row);
      if (ref === undefined || !large.has(ref))
        return decodeEntry(row, (r) => values.get(r) as Json, this.values.codec, namespace);
      deferred[`${row.seq}.${valueFieldOf(row.kind)!}`] = { ref, size: sizes.get(ref)! };
      return decodeEntry(row, () => null, this.values.codec, namespace);
    });
    return { entries, deferred };
  }

  async readRunValue(runId: string, ref: string): Promise<Json | undefined> {
    const used = await this.sql.query<{ namespace: string }>(
      `SELECT r.namespace FROM rw_run_values v JOIN rw_runs r ON r.id = v.run_id
        WHERE v.run_id = $1 AND v.ref = $2`,
      [runId, ref],
    );
    if (used[0] === undefined) return undefined;
    return (await this.values.load([ref], used[0].namespace)).get(ref);
  }

  // ---- leases (the queries are in leases.ts)

  acquireLease(
    runId: string,
    owner: string,
    ttlMs: number,
    options: LeaseOptions = {},
  ): Promise<Lease | undefined> {
    return leases.acquire(this.sql, runId, owner, ttlMs, options);
  }

  loadRun(
    runId: string,
    owner: string,
    ttlMs: number,
    options: LeaseOptions = {},
  ): Promise<LoadedRun | undefined> {
    return leases.load(this.sql, this.values, runId, owner, ttlMs, options);
  }

  renewLeases(owner: string, runIds: readonly string[], ttlMs: number): Promise<void> {
    return leases.renew(this.sql, owner, runIds, ttlMs);
  }

  releaseLease(lease: Lease): Promise<void> {
    return leases.release(this.sql, lease);
  }

  clearAttempts(lease: Lease): Promise<void> {
    return leases.clearAttempts(this.sql, lease);
  }

  recordDeath(lease: Lease, seq: number, cause: string): Promise<number> {
    return leases.recordDeath(this.sql, lease, seq, cause);
  }

  // ---- appends

  async commit(appends: readonly RunAppend[]): Promise<AppendOutcome[]> {
    if (appends.length === 0) return [];
    // Plain steps (journal rows only) go in as one INSERT; the rest through rw_commit. The two
    // statements commit on their own (each run's append is in one of them: atomic per run) and
    // run side by side on two connections.
    const plain: { index: number; append: RunAppend; rows: EntryRow[] }[] = [];
    const other: { index: number; append: RunAppend; seal: Seal }[] = [];
    for (const [index, append] of appends.entries()) {
      const seal = await this.sealOf(append.lease);
      const rows = append.runRowUnchanged === true ? plainStep(append, seal) : undefined;
      if (rows !== undefined) plain.push({ index, append, rows });
      else other.push({ index, append, seal });
    }
    // Nothing but plain steps (a hot run's, on an idle worker): straight to their statement.
    if (other.length === 0) return commitPlainSteps(this.sql, plain);
    const outcomes: AppendOutcome[] = new Array<AppendOutcome>(appends.length);
    const plainDone = async () => {
      if (plain.length === 0) return;
      const results = await commitPlainSteps(this.sql, plain);
      plain.forEach((step, i) => (outcomes[step.index] = results[i]!));
    };
    const otherDone = async () => {
      if (other.length === 0) return;
      const batch = [];
      for (const { append, seal } of other)
        batch.push(await encodeAppend(append, (v) => this.values.prepare(v), seal));
      const { rows } = await this.sql.execute<{ results: AppendOutcome[] }>(
        "rw_commit",
        "SELECT rw_commit($1::jsonb) AS results",
        [JSON.stringify(batch)],
      );
      other.forEach((step, i) => (outcomes[step.index] = rows[0]!.results[i]!));
    };
    await Promise.all([plainDone(), otherDone()]);
    return outcomes;
  }

  async addInbox(
    runId: string,
    item: { kind: "signal" | "cancel"; name?: string; payload?: Json },
  ): Promise<number> {
    const namespace = await this.namespaceOf(runId);
    const seal = namespace === undefined ? undefined : await this.codecs.sealFor(namespace);
    const value = encodeValue(item.payload ?? null, seal);
    const [prepared] = await this.values.prepare([value]);
    return this.sql.transaction(async (tx) => {
      await this.values.insert(tx, runId, [prepared!]);
      const rows = await tx.query<{ id: string }>(
        "INSERT INTO rw_inbox (run_id, kind, name, payload_ref) VALUES ($1, $2, $3, $4) RETURNING id",
        [runId, item.kind, item.name ?? null, value.ref],
      );
      return Number(rows[0]!.id);
    });
  }

  async pendingInbox(runId: string): Promise<InboxItem[]> {
    const rows = await this.sql.query<{
      id: string;
      kind: "signal" | "cancel";
      name: string | null;
      payload_ref: string;
      namespace: string;
    }>(
      // Signals and cancels only: operators' requests about a quarantined run are the quarantine service's.
      `SELECT i.id, i.kind, i.name, i.payload_ref, r.namespace
         FROM rw_inbox i JOIN rw_runs r ON r.id = i.run_id
        WHERE i.run_id = $1 AND i.consumed_seq IS NULL AND i.kind IN ('signal', 'cancel') ORDER BY i.id`,
      [runId],
    );
    const values = await this.values.load(
      rows.map((r) => r.payload_ref),
      rows[0]?.namespace ?? "",
    );
    return rows.map((r) => ({
      id: Number(r.id),
      runId,
      kind: r.kind,
      name: r.name,
      payload: values.get(r.payload_ref) ?? null,
    }));
  }

  async runsWithPendingInbox(limit: number): Promise<string[]> {
    const rows = await this.sql.query<{ run_id: string }>(
      `SELECT DISTINCT i.run_id FROM rw_inbox i JOIN rw_runs r ON r.id = i.run_id
        WHERE i.consumed_seq IS NULL AND i.kind IN ('signal', 'cancel') AND r.ended_at IS NULL
          AND r.status <> 'quarantined' LIMIT $1`,
      [limit],
    );
    return rows.map((r) => r.run_id);
  }

  async dueTimers(now: number, limit: number): Promise<DueTimer[]> {
    const rows = await this.sql.query<{ run_id: string; timer_seq: number; due_at: string }>(
      `SELECT t.run_id, t.timer_seq, t.due_at FROM rw_timers t JOIN rw_runs r ON r.id = t.run_id
        WHERE t.due_at <= $1 AND r.status <> 'quarantined' ORDER BY t.due_at, t.run_id, t.timer_seq LIMIT $2`,
      [now, limit],
    );
    return rows.map((r) => ({ runId: r.run_id, timerSeq: r.timer_seq, dueAt: Number(r.due_at) }));
  }

  async strandedRuns(
    limit: number,
    { idleMs, unstartedMs }: { idleMs: number; unstartedMs: number },
  ): Promise<string[]> {
    const rows = await this.sql.query<{ id: string }>(
      `SELECT id FROM rw_runs
        WHERE ended_at IS NULL AND status IN ('queued', 'running')
          AND (lease_owner IS NULL OR lease_expires_at < now())
          AND updated_at < now() - (CASE WHEN lease_token = 0 THEN $3::bigint ELSE $2::bigint END) * interval '1 millisecond'
          AND (lease_expires_at IS NULL OR lease_expires_at < now() - $2 * interval '1 millisecond')
        LIMIT $1`,
      [limit, idleMs, unstartedMs],
    );
    return rows.map((row) => row.id);
  }

  async routes(runIds: readonly string[]): Promise<RunRoute[]> {
    if (runIds.length === 0) return [];
    const rows = await this.sql.query<{
      id: string;
      epoch: number;
      holder: string | null;
      leases: string;
    }>(
      `SELECT id, epoch, CASE WHEN lease_expires_at > now() THEN lease_owner END AS holder,
              lease_token AS leases
         FROM rw_runs WHERE id = ANY($1)`,
      [runIds],
    );
    return rows.map((row) => ({
      runId: row.id,
      epoch: row.epoch,
      leases: Number(row.leases),
      ...(row.holder !== null ? { holder: row.holder } : {}),
    }));
  }

  async openRuns(limit: number, afterId = ""): Promise<{ id: string; status: RunStatus }[]> {
    return this.sql.query<{ id: string; status: RunStatus }>(
      "SELECT id, status FROM rw_runs WHERE ended_at IS NULL AND status <> 'quarantined' AND id > $1 ORDER BY id LIMIT $2",
      [afterId, limit],
    );
  }

  async deleteExpired(now: Date): Promise<{ runs: number; values: number }> {
    // A run's journal goes with it (its rows have no foreign key to cascade: migration 0005).
    // A run someone still holds is never deleted: its holder may yet append.
    const runs = await this.sql.query(
      `WITH runs AS (
         DELETE FROM rw_runs
          WHERE expires_at < $1 AND (lease_owner IS NULL OR lease_expires_at < now())
            -- Retention waits for every projection sink: a run goes once each sink delivered it.
            AND NOT EXISTS (
              SELECT 1 FROM rw_journal j
               WHERE j.run_id = rw_runs.id
                 AND j.xid >= (SELECT min(below_xid) FROM rw_projection_cursors)::text::xid8)
          RETURNING id),
       journal AS (DELETE FROM rw_journal WHERE run_id IN (SELECT id FROM runs))
       SELECT id FROM runs`,
      [now],
    );
    const orphans = await this.sql.query<{ ref: string; blob_key: string | null }>(
      `DELETE FROM rw_values v WHERE NOT EXISTS (SELECT 1 FROM rw_run_values rv WHERE rv.ref = v.ref)
         AND v.created_at < $1 RETURNING ref, blob_key`,
      [now],
    );
    for (const orphan of orphans)
      if (orphan.blob_key !== null) await this.blobs.delete(orphan.blob_key);
    return { runs: runs.length, values: orphans.length };
  }

  // ---- projections (the queries are in projections.ts)

  projectionWindow(
    below: bigint,
    limit: number,
    kinds?: ReadonlySet<string>,
  ): Promise<ProjectionWindow> {
    return projections.readWindow(this.sql, below, limit, kinds);
  }

  projectedRun(runId: string, fromSeq?: number): Promise<ProjectedRun | undefined> {
    return projections.readProjectedRun(this.sql, runId, fromSeq);
  }

  async projectedRuns(
    wanted: readonly { runId: string; fromSeq: number }[],
  ): Promise<Map<string, { run: ProjectedRun; journal: JournalEntry[] }>> {
    const found = await projections.readProjectedRuns(this.sql, wanted);
    // Values are loaded a namespace at a time: a sealed one opens only as its namespace's.
    const refs = new Map<string, Set<string>>();
    for (const { namespace, rows } of found.values())
      for (const row of rows) {
        const ref = refOf(row);
        if (ref !== undefined)
          (refs.get(namespace) ?? refs.set(namespace, new Set()).get(namespace)!).add(ref);
      }
    const values = new Map<string, Map<string, Json>>();
    for (const [namespace, wantedRefs] of refs)
      values.set(namespace, await this.values.load([...wantedRefs], namespace));
    const out = new Map<string, { run: ProjectedRun; journal: JournalEntry[] }>();
    for (const [runId, { run, namespace, rows }] of found) {
      const own = values.get(namespace);
      out.set(runId, {
        run,
        journal: rows.map((row) =>
          decodeEntry(row, (ref) => own?.get(ref) as Json, this.values.codec, namespace),
        ),
      });
    }
    return out;
  }

  ensureProjectionCursor(sink: string): Promise<bigint> {
    return projections.ensureCursor(this.sql, sink);
  }

  advanceProjectionCursor(sink: string, from: bigint, to: bigint, delivered: number) {
    return projections.advanceCursor(this.sql, sink, from, to, delivered);
  }

  projectionCursors(): Promise<ProjectionCursor[]> {
    return projections.listCursors(this.sql);
  }

  projectionLags(): Promise<{ sink: string; oldestPending?: Date }[]> {
    return projections.readLags(this.sql);
  }

  runsCommittedSince(since: Date): Promise<string[]> {
    return projections.runsCommittedSince(this.sql, since);
  }

  // ---- workers (the queries are in workers.ts)

  requestEpochCheck(check: NewEpochCheck) {
    return epochMoves.requestEpochCheck(this.sql, check);
  }

  takeEpochCheck(owner: string, epochs: readonly number[], staleMs: number) {
    return epochMoves.takeEpochCheck(this.sql, owner, epochs, staleMs);
  }

  touchEpochCheck(id: number, owner: string) {
    return epochMoves.touchEpochCheck(this.sql, id, owner);
  }

  async finishEpochCheck(id: number, owner: string, report: EpochCheckReport) {
    // A verdict's message quotes the run's values (a divergence's short forms): sealed with the
    // namespace's values, as { sealed } in the report's column.
    const rows = await this.sql.query<{ namespace: string }>(
      "SELECT namespace FROM rw_epoch_checks WHERE id = $1",
      [id],
    );
    const seal = rows[0] === undefined ? undefined : await this.codecs.sealFor(rows[0].namespace);
    const stored =
      seal === undefined
        ? report
        : ({ sealed: seal(canonicalize(report)) } as unknown as EpochCheckReport);
    return epochMoves.finishEpochCheck(this.sql, id, owner, stored);
  }

  async getEpochCheck(namespace: string, id: number) {
    const check = await epochMoves.getEpochCheck(this.sql, namespace, id);
    const sealed = (check?.report as { sealed?: unknown } | null | undefined)?.sealed;
    if (check === undefined || typeof sealed !== "string") return check;
    return {
      ...check,
      report: JSON.parse(openText(sealed, this.values.codec, namespace)) as EpochCheckReport,
    };
  }

  openRunsOfEpoch(namespace: string, epoch: number, limit: number, afterId?: string) {
    return epochMoves.openRunsOfEpoch(this.sql, namespace, epoch, limit, afterId);
  }

  moveRunEpoch(
    lease: Lease,
    move: { from: number; to: number; checkedSeq: number; by: string; checkId?: number },
  ) {
    return epochMoves.moveRunEpoch(this.sql, lease, move);
  }

  epochMoves(runId: string) {
    return epochMoves.epochMoves(this.sql, runId);
  }

  workerSeen(owner: string, epochs: readonly number[]): Promise<void> {
    return workers.workerSeen(this.sql, owner, epochs);
  }

  workerGone(owner: string): Promise<void> {
    return workers.workerGone(this.sql, owner);
  }

  liveWorkers(seenWithinMs: number): Promise<workers.LiveWorker[]> {
    return workers.liveWorkers(this.sql, seenWithinMs);
  }

  // ---- toolsets (the queries are in toolsets.ts)

  publishToolsets(
    described: readonly toolsets.ToolsetDescription[],
    publisher: string,
  ): Promise<void> {
    return toolsets.publishToolsets(this.sql, described, publisher);
  }

  getToolset(name: string): Promise<toolsets.PublishedToolset | undefined> {
    return toolsets.getToolset(this.sql, name);
  }

  // ---- quarantine (the queries are in quarantine.ts)

  async identify(token: string): Promise<{ namespace: string; label: string } | undefined> {
    const grant = await tokens.lookUpToken(this.sql, token);
    return grant === undefined ? undefined : { namespace: grant.namespace, label: grant.label };
  }

  addQuarantineRequest(runId: string, request: NewQuarantineRequest): Promise<number> {
    return quarantine.addQuarantineRequest(this.sql, runId, request);
  }

  pendingQuarantineRequests(
    limit: number,
    runIds?: readonly string[],
  ): Promise<QuarantineRequest[]> {
    return quarantine.pendingQuarantineRequests(this.sql, limit, runIds);
  }

  dismissQuarantineRequests(runId: string, ids: readonly number[], seq: number): Promise<void> {
    return quarantine.dismissQuarantineRequests(this.sql, runId, ids, seq);
  }

  async commitRelease(append: RunAppend, epoch: number): Promise<AppendOutcome> {
    const encoded = await encodeAppend(
      append,
      (v) => this.values.prepare(v),
      await this.sealOf(append.lease),
    );
    // The epoch moves only with the entry that says so: both commit, or neither.
    return this.sql.transaction(async (tx) => {
      const rows = await tx.query<{ results: AppendOutcome[] }>(
        "SELECT rw_commit($1::jsonb) AS results",
        [JSON.stringify([encoded])],
      );
      const outcome = rows[0]!.results[0] ?? "lease_lost";
      if (outcome === "ok")
        await tx.query("UPDATE rw_runs SET epoch = $2 WHERE id = $1", [append.lease.runId, epoch]);
      return outcome;
    });
  }

  async listQuarantined(filter: Omit<ListRunsFilter, "status">): Promise<QuarantinedRun[]> {
    const runs = await this.listRuns({ ...filter, status: "quarantined" });
    return quarantine.withReports(this.sql, runs, this.values.codec);
  }

  quarantineCounts(): Promise<QuarantineCount[]> {
    return quarantine.quarantineCounts(this.sql);
  }

  openRunsByEpoch(namespace?: string): Promise<EpochRunCount[]> {
    return quarantine.openRunsByEpoch(this.sql, namespace);
  }
}

const TOKEN_CACHE_MS = 5_000;

function scriptKey(namespace: string, hash: string): string {
  return `${namespace}\u0000${hash}`;
}
