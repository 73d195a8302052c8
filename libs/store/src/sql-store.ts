import { createHash, randomBytes } from "node:crypto";
import { and, desc, eq, isNull, lt } from "drizzle-orm";
import { type ErrorData, type Json, type JournalEntry, RewindError } from "@rewind/core";
import type { BlobStore } from "./blobs.js";
import {
  INLINE_VALUE_LIMIT,
  decodeEntry,
  encodeEntry,
  encodeValue,
  refOf,
  type EncodedValue,
  type EntryRow,
} from "./encoding.js";
import * as quarantine from "./quarantine.js";
import * as toolsets from "./toolsets.js";
import type {
  EpochRunCount,
  NewQuarantineRequest,
  QuarantineCount,
  QuarantineRequest,
  QuarantinedRun,
} from "./quarantine.js";
import * as schema from "./schema.js";
import type { SqlClient } from "./sql.js";
import type {
  AppendOutcome,
  DueTimer,
  InboxItem,
  Lease,
  ListRunsFilter,
  RunAppend,
  RunRecord,
  RunRoute,
  LoadedRun,
  RunStatus,
  Store,
  StoredScript,
} from "./store.js";

/** A value as stored: its canonical JSON text inline, or the key of the blob holding it. */
type ValueRow = { ref: string; body: string | null; blobKey: string | null; size: number };

/** The store over SQL: the same code for Postgres and PGlite. */
export class SqlStore implements Store {
  private readonly scripts = new Map<string, StoredScript>();
  private readonly tokens = new Map<string, { namespace: string; until: number }>();

  constructor(
    private readonly sql: SqlClient,
    private readonly blobs: BlobStore,
  ) {}

  get kind() {
    return this.sql.kind;
  }

  close(): Promise<void> {
    return this.sql.close();
  }

  async ensureNamespace(name: string): Promise<void> {
    await this.sql.db.insert(schema.namespaces).values({ name }).onConflictDoNothing();
  }

  async createToken(namespace: string, label: string): Promise<string> {
    await this.ensureNamespace(namespace);
    const token = `rw_${randomBytes(24).toString("base64url")}`;
    await this.sql.db
      .insert(schema.apiTokens)
      .values({ tokenHash: hashToken(token), namespace, label });
    return token;
  }

  async authenticate(token: string): Promise<string | undefined> {
    // Every request asks: a granted token is remembered for a few seconds (a revoked one stops
    // working within TOKEN_CACHE_MS).
    const hash = hashToken(token);
    const known = this.tokens.get(hash);
    if (known !== undefined && known.until > Date.now()) return known.namespace;
    const namespace = await this.lookUpToken(token);
    if (namespace === undefined) this.tokens.delete(hash);
    else {
      if (this.tokens.size >= 1000) this.tokens.clear();
      this.tokens.set(hash, { namespace, until: Date.now() + TOKEN_CACHE_MS });
    }
    return namespace;
  }

  private async lookUpToken(token: string): Promise<string | undefined> {
    const rows = await this.sql.db
      .select({ namespace: schema.apiTokens.namespace })
      .from(schema.apiTokens)
      .where(
        and(eq(schema.apiTokens.tokenHash, hashToken(token)), isNull(schema.apiTokens.revokedAt)),
      );
    return rows[0]?.namespace;
  }

  async putScript(script: StoredScript): Promise<void> {
    if (this.scripts.has(script.hash)) return; // stored by hash: what is stored never changes
    await this.sql.db.insert(schema.scripts).values(script).onConflictDoNothing();
    this.rememberScript(script);
  }

  async getScript(hash: string): Promise<StoredScript | undefined> {
    const known = this.scripts.get(hash);
    if (known !== undefined) return known;
    const rows = await this.sql.db
      .select({
        hash: schema.scripts.hash,
        entry: schema.scripts.entry,
        code: schema.scripts.code,
        sourceMap: schema.scripts.sourceMap,
      })
      .from(schema.scripts)
      .where(eq(schema.scripts.hash, hash));
    if (rows[0] !== undefined) this.rememberScript(rows[0]);
    return rows[0];
  }

  /** Scripts are immutable (stored by the hash of their code): the last few used stay here. */
  private rememberScript(script: StoredScript): void {
    this.scripts.delete(script.hash);
    this.scripts.set(script.hash, script);
    if (this.scripts.size > 64) this.scripts.delete(this.scripts.keys().next().value!);
  }

  async createRun({
    started,
    ttlMs,
  }: {
    started: JournalEntry & { kind: "run.started" };
    ttlMs: number;
  }): Promise<void> {
    const { row, value } = encodeEntry(started);
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
    if (value === undefined) {
      // The usual case (the input fits inline): one statement, one round trip. The foreign keys
      // are checked at its end, when the namespace and run rows of the same statement exist.
      await this.sql.execute(
        "rw_create_run",
        `WITH namespace AS (INSERT INTO rw_namespaces (name) VALUES ($2) ON CONFLICT DO NOTHING),
              run AS (
                INSERT INTO rw_runs (id, namespace, script_hash, toolset, epoch, status, parent_id, parent_seq, ttl_ms)
                VALUES ($1, $2, $3, $4, $5, 'queued', $6, $7, $8))
         INSERT INTO rw_journal (run_id, seq, kind, at, callsite, body) VALUES ($1, 1, $9, $10, NULL, $11)`,
        [...run, row.kind, row.at, JSON.stringify(row.body)],
      );
      return;
    }
    const values = await this.prepareValues([value]);
    await this.sql.transaction(async (tx) => {
      await tx.query("INSERT INTO rw_namespaces (name) VALUES ($1) ON CONFLICT DO NOTHING", [
        started.namespace,
      ]);
      await tx.query(
        `INSERT INTO rw_runs (id, namespace, script_hash, toolset, epoch, status, parent_id, parent_seq, ttl_ms)
         VALUES ($1, $2, $3, $4, $5, 'queued', $6, $7, $8)`,
        run,
      );
      await this.insertValues(tx, started.runId, values);
      await tx.query(
        "INSERT INTO rw_journal (run_id, seq, kind, at, callsite, body) VALUES ($1, 1, $2, $3, NULL, $4)",
        [started.runId, row.kind, row.at, JSON.stringify(row.body)],
      );
    });
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    const rows = await this.sql.db.select().from(schema.runs).where(eq(schema.runs.id, id));
    if (rows[0] === undefined) return undefined;
    return this.toRecord(rows[0], (await this.lastSeqs([id])).get(id) ?? 1);
  }

  /** The journal is the truth about where a run is: its highest seq. */
  private async lastSeqs(runIds: readonly string[]): Promise<Map<string, number>> {
    const rows = await this.sql.query<{ run_id: string; last: number }>(
      "SELECT run_id, max(seq) AS last FROM rw_journal WHERE run_id = ANY($1) GROUP BY run_id",
      [runIds],
    );
    return new Map(rows.map((r) => [r.run_id, r.last]));
  }

  async listRuns(filter: ListRunsFilter): Promise<RunRecord[]> {
    const conditions = [eq(schema.runs.namespace, filter.namespace)];
    if (filter.status !== undefined) conditions.push(eq(schema.runs.status, filter.status));
    if (filter.before !== undefined) conditions.push(lt(schema.runs.id, filter.before));
    const rows = await this.sql.db
      .select()
      .from(schema.runs)
      .where(and(...conditions))
      .orderBy(desc(schema.runs.id))
      .limit(Math.min(filter.limit ?? 50, 1000));
    const last = await this.lastSeqs(rows.map((row) => row.id));
    return Promise.all(rows.map((row) => this.toRecord(row, last.get(row.id) ?? 1)));
  }

  async readJournal(runId: string, fromSeq = 1): Promise<JournalEntry[]> {
    const rows = await this.sql.query<EntryRow>(
      "SELECT seq, kind, at, callsite, body FROM rw_journal WHERE run_id = $1 AND seq >= $2 ORDER BY seq",
      [runId, fromSeq],
    );
    const refs = [...new Set(rows.map(refOf).filter((ref): ref is string => ref !== undefined))];
    const values = await this.loadValues(refs);
    return rows.map((row) => decodeEntry(row, (ref) => values.get(ref) as Json));
  }

  async acquireLease(
    runId: string,
    owner: string,
    ttlMs: number,
    options: { steal?: boolean; epochs?: readonly number[] } = {},
  ): Promise<Lease | undefined> {
    const rows = await this.sql.query<{ token: string; last_seq: number; attempts: number }>(
      `UPDATE rw_runs SET lease_owner = $2, lease_token = lease_token + 1,
              lease_expires_at = now() + $3 * interval '1 millisecond', attempts = attempts + 1
        WHERE id = $1 AND ended_at IS NULL
          AND ($4 OR lease_owner IS NULL OR lease_owner = $2 OR lease_expires_at < now())
          AND ($5::integer[] IS NULL OR epoch = ANY($5))
        RETURNING lease_token AS token, attempts,
                  (SELECT max(seq) FROM rw_journal WHERE run_id = $1) AS last_seq`,
      [runId, owner, ttlMs, options.steal === true, options.epochs ?? null],
    );
    const row = rows[0];
    return row === undefined
      ? undefined
      : { runId, owner, token: Number(row.token), lastSeq: row.last_seq, attempts: row.attempts };
  }

  async loadRun(
    runId: string,
    owner: string,
    ttlMs: number,
    options: { steal?: boolean; epochs?: readonly number[] } = {},
  ): Promise<LoadedRun | undefined> {
    const rows = await this.sql.query<{
      run: Record<string, unknown>;
      journal: EntryRow[];
      inbox: { id: number; kind: "signal" | "cancel"; name: string | null; payload_ref: string }[];
    }>(
      `WITH run AS (
         UPDATE rw_runs SET lease_owner = $2, lease_token = lease_token + 1,
                lease_expires_at = now() + $3 * interval '1 millisecond', attempts = attempts + 1
          WHERE id = $1 AND ended_at IS NULL
            AND ($4 OR lease_owner IS NULL OR lease_owner = $2 OR lease_expires_at < now())
            AND ($5::integer[] IS NULL OR epoch = ANY($5))
          RETURNING *)
       SELECT to_jsonb(run) AS run,
              (SELECT coalesce(jsonb_agg(jsonb_build_object('seq', j.seq, 'kind', j.kind, 'at', j.at,
                        'callsite', j.callsite, 'body', j.body) ORDER BY j.seq), '[]')
                 FROM rw_journal j WHERE j.run_id = $1) AS journal,
              (SELECT coalesce(jsonb_agg(jsonb_build_object('id', i.id, 'kind', i.kind, 'name', i.name,
                        'payload_ref', i.payload_ref) ORDER BY i.id), '[]')
                 FROM rw_inbox i
                WHERE i.run_id = $1 AND i.consumed_seq IS NULL AND i.kind IN ('signal', 'cancel')) AS inbox
         FROM run`,
      [runId, owner, ttlMs, options.steal === true, options.epochs ?? null],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    const run = row.run;
    const refs = [
      ...row.journal.map(refOf).filter((ref): ref is string => ref !== undefined),
      ...row.inbox.map((item) => item.payload_ref),
    ];
    const values = await this.loadValues([...new Set(refs)]);
    const journal = row.journal.map((entry) =>
      decodeEntry(entry, (ref) => values.get(ref) as Json),
    );
    const lastSeq = journal.at(-1)?.seq ?? 1;
    const at = (key: string) => (run[key] === null ? null : new Date(run[key] as string));
    return {
      lease: {
        runId,
        owner,
        token: Number(run.lease_token),
        lastSeq,
        attempts: run.attempts as number,
      },
      record: await this.toRecord(
        {
          id: runId,
          namespace: run.namespace as string,
          scriptHash: run.script_hash as string,
          toolset: run.toolset as string,
          epoch: run.epoch as number,
          status: run.status as string,
          parentId: run.parent_id as string | null,
          parentSeq: run.parent_seq as number | null,
          leaseOwner: owner,
          leaseToken: Number(run.lease_token),
          leaseExpiresAt: at("lease_expires_at"),
          attempts: run.attempts as number,
          resultJson: run.result_json as string | null,
          resultRef: run.result_ref as string | null,
          error: run.error as ErrorData | null,
          ttlMs: Number(run.ttl_ms),
          createdAt: at("created_at")!,
          updatedAt: at("updated_at")!,
          endedAt: at("ended_at"),
          expiresAt: at("expires_at"),
        } as typeof schema.runs.$inferSelect,
        lastSeq,
      ),
      journal,
      inbox: row.inbox.map((item) => ({
        id: Number(item.id),
        runId,
        kind: item.kind,
        name: item.name,
        payload: values.get(item.payload_ref) ?? null,
      })),
    };
  }

  async renewLeases(owner: string, runIds: readonly string[], ttlMs: number): Promise<void> {
    if (runIds.length === 0) return;
    await this.sql.query(
      "UPDATE rw_runs SET lease_expires_at = now() + $3 * interval '1 millisecond' WHERE id = ANY($1) AND lease_owner = $2",
      [runIds, owner, ttlMs],
    );
  }

  async releaseLease(lease: Lease): Promise<void> {
    await this.sql.query(
      "UPDATE rw_runs SET lease_owner = NULL, lease_expires_at = NULL, attempts = 0 WHERE id = $1 AND lease_owner = $2 AND lease_token = $3",
      [lease.runId, lease.owner, lease.token],
    );
  }

  async clearAttempts(lease: Lease): Promise<void> {
    await this.sql.query(
      "UPDATE rw_runs SET attempts = 0 WHERE id = $1 AND lease_owner = $2 AND lease_token = $3",
      [lease.runId, lease.owner, lease.token],
    );
  }

  async commit(appends: readonly RunAppend[]): Promise<AppendOutcome[]> {
    if (appends.length === 0) return [];
    if (appends.length === 1 && appends[0]!.runRowUnchanged === true) {
      const plain = plainStep(appends[0]!);
      if (plain !== undefined) return [await this.commitPlain(appends[0]!, plain)];
    }
    const batch = [];
    for (const append of appends) batch.push(await this.encodeAppend(append));
    const rows = await this.sql.query<{ results: AppendOutcome[] }>(
      "SELECT rw_commit($1::jsonb) AS results",
      [JSON.stringify(batch)],
    );
    return rows[0]!.results;
  }

  /**
   * One run's plain step as one prepared INSERT: its entries, fenced in the same statement by the
   * lease (owner and token) and by the journal's end (seq afterSeq exists; the (run_id, seq) key
   * refuses afterSeq + 1 if it does too). As fast as a bare INSERT; rw_commit (a plpgsql loop over
   * a jsonb batch) costs half as much again, and stays for everything else.
   */
  private async commitPlain(append: RunAppend, rows: readonly EntryRow[]): Promise<AppendOutcome> {
    const { lease, afterSeq } = append;
    const params: unknown[] = [lease.runId, lease.owner, lease.token, afterSeq];
    const tuples = rows.map((row) => {
      const at = params.push(row.seq, row.kind, row.at, row.callsite, JSON.stringify(row.body));
      return `($${at - 4}::integer, $${at - 3}::text, $${at - 2}::bigint, $${at - 1}::text, $${at}::jsonb)`;
    });
    try {
      const count = await this.sql.execute(
        `rw_plain_step_${rows.length}`,
        `INSERT INTO rw_journal (run_id, seq, kind, at, callsite, body)
         SELECT $1, e.seq, e.kind, e.at, e.callsite, e.body
           FROM (VALUES ${tuples.join(", ")}) AS e (seq, kind, at, callsite, body)
          WHERE EXISTS (SELECT 1 FROM rw_runs WHERE id = $1 AND lease_owner = $2 AND lease_token = $3)
            AND EXISTS (SELECT 1 FROM rw_journal WHERE run_id = $1 AND seq = $4::integer)`,
        params,
      );
      return count === rows.length ? "ok" : "lease_lost";
    } catch (error) {
      // Another owner appended after the same seq first: this owner's step is refused.
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) return "lease_lost";
      throw error;
    }
  }

  async addInbox(
    runId: string,
    item: { kind: "signal" | "cancel"; name?: string; payload?: Json },
  ): Promise<number> {
    const value = encodeValue(item.payload ?? null);
    const [prepared] = await this.prepareValues([value]);
    return this.sql.transaction(async (tx) => {
      await this.insertValues(tx, runId, [prepared!]);
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
    }>(
      // Signals and cancels only: operators' requests about a quarantined run are the quarantine service's.
      "SELECT id, kind, name, payload_ref FROM rw_inbox WHERE run_id = $1 AND consumed_seq IS NULL AND kind IN ('signal', 'cancel') ORDER BY id",
      [runId],
    );
    const values = await this.loadValues(rows.map((r) => r.payload_ref));
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

  async strandedRuns(limit: number, idleMs: number): Promise<string[]> {
    const rows = await this.sql.query<{ id: string }>(
      `SELECT id FROM rw_runs
        WHERE ended_at IS NULL AND status IN ('queued', 'running')
          AND (lease_owner IS NULL OR lease_expires_at < now())
          AND updated_at < now() - $2 * interval '1 millisecond'
          AND (lease_expires_at IS NULL OR lease_expires_at < now() - $2 * interval '1 millisecond')
        LIMIT $1`,
      [limit, idleMs],
    );
    return rows.map((row) => row.id);
  }

  async routes(runIds: readonly string[]): Promise<RunRoute[]> {
    if (runIds.length === 0) return [];
    const rows = await this.sql.query<{ id: string; epoch: number; holder: string | null }>(
      `SELECT id, epoch, CASE WHEN lease_expires_at > now() THEN lease_owner END AS holder
         FROM rw_runs WHERE id = ANY($1)`,
      [runIds],
    );
    return rows.map((row) => ({
      runId: row.id,
      epoch: row.epoch,
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
    const runs = await this.sql.query("DELETE FROM rw_runs WHERE expires_at < $1 RETURNING id", [
      now,
    ]);
    const orphans = await this.sql.query<{ ref: string; blob_key: string | null }>(
      `DELETE FROM rw_values v WHERE NOT EXISTS (SELECT 1 FROM rw_run_values rv WHERE rv.ref = v.ref)
         AND v.created_at < $1 RETURNING ref, blob_key`,
      [now],
    );
    for (const orphan of orphans)
      if (orphan.blob_key !== null) await this.blobs.delete(orphan.blob_key);
    return { runs: runs.length, values: orphans.length };
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
    const rows = await this.sql.query<{ namespace: string; label: string }>(
      "SELECT namespace, label FROM rw_api_tokens WHERE token_hash = $1 AND revoked_at IS NULL",
      [hashToken(token)],
    );
    return rows[0];
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
    const encoded = await this.encodeAppend(append);
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
    return quarantine.withReports(this.sql, runs);
  }

  quarantineCounts(): Promise<QuarantineCount[]> {
    return quarantine.quarantineCounts(this.sql);
  }

  openRunsByEpoch(namespace?: string): Promise<EpochRunCount[]> {
    return quarantine.openRunsByEpoch(this.sql, namespace);
  }

  // ---- values

  /** Large values go to the blob store first: the row that refers to a blob commits after it. */
  private async prepareValues(values: readonly EncodedValue[]): Promise<ValueRow[]> {
    const rows: ValueRow[] = [];
    for (const value of values) {
      if (value.size > INLINE_VALUE_LIMIT) {
        const key = value.ref.slice("sha256:".length);
        await this.blobs.put(key, value.canonical);
        rows.push({ ref: value.ref, body: null, blobKey: key, size: value.size });
      } else {
        rows.push({ ref: value.ref, body: value.canonical, blobKey: null, size: value.size });
      }
    }
    return rows;
  }

  private async insertValues(
    tx: Pick<SqlClient, "query">,
    runId: string,
    values: readonly ValueRow[],
  ): Promise<void> {
    for (const v of values) {
      await tx.query(
        "INSERT INTO rw_values (ref, body, blob_key, size) VALUES ($1, $2, $3, $4) ON CONFLICT (ref) DO NOTHING",
        [v.ref, v.body, v.blobKey, v.size],
      );
      await tx.query(
        "INSERT INTO rw_run_values (run_id, ref) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        [runId, v.ref],
      );
    }
  }

  private async loadValues(refs: readonly string[]): Promise<Map<string, Json>> {
    const values = new Map<string, Json>();
    if (refs.length === 0) return values;
    const rows = await this.sql.query<{
      ref: string;
      body: string | null;
      blob_key: string | null;
    }>("SELECT ref, body, blob_key FROM rw_values WHERE ref = ANY($1)", [refs]);
    for (const row of rows) {
      const canonical = row.blob_key === null ? row.body! : await this.blobs.get(row.blob_key);
      values.set(row.ref, JSON.parse(canonical) as Json);
    }
    for (const ref of refs) {
      if (!values.has(ref))
        throw new RewindError("SANDBOX_ERROR", `The value ${ref} is missing from the store`);
    }
    return values;
  }

  private async encodeAppend(append: RunAppend) {
    const rows: EntryRow[] = [];
    const encoded: EncodedValue[] = [];
    const timersSet: { seq: number; due: number }[] = [];
    const timersCleared: number[] = [];
    let ended = false;
    let resultRef: string | undefined;
    let resultJson: string | undefined;
    let error: ErrorData | undefined;
    for (const entry of append.entries) {
      const { row, value, inline } = encodeEntry(entry);
      rows.push(row);
      if (value) encoded.push(value);
      switch (entry.kind) {
        case "timer.set":
          timersSet.push({ seq: entry.seq, due: entry.due });
          break;
        case "timer.cancel":
          timersCleared.push(entry.timerSeq);
          break;
        case "timer.fired":
          timersCleared.push(entry.timerSeq);
          break;
        case "run.completed":
          ended = true;
          if (inline !== undefined) resultJson = inline;
          else resultRef = value!.ref;
          break;
        case "run.failed":
          ended = true;
          error = entry.error;
          break;
        case "run.cancelled":
          ended = true;
          break;
        default:
          break;
      }
    }
    const values = await this.prepareValues(encoded);
    return {
      runId: append.lease.runId,
      owner: append.lease.owner,
      token: append.lease.token,
      afterSeq: append.afterSeq,
      status: append.status,
      ended,
      resultRef,
      resultJson,
      error,
      entries: rows,
      values,
      timersSet,
      timersCleared,
      inboxConsumed: append.inboxConsumed ?? [],
    };
  }

  private async toRecord(
    row: typeof schema.runs.$inferSelect,
    lastSeq: number,
  ): Promise<RunRecord> {
    const record: RunRecord = {
      id: row.id,
      namespace: row.namespace,
      scriptHash: row.scriptHash,
      toolset: row.toolset,
      epoch: row.epoch,
      status: row.status as RunStatus,
      lastSeq,
      ttlMs: row.ttlMs,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
    };
    if (row.parentId !== null) record.parent = { runId: row.parentId, seq: row.parentSeq ?? 0 };
    if (row.resultJson !== null) record.result = JSON.parse(row.resultJson) as Json;
    else if (row.resultRef !== null)
      record.result = (await this.loadValues([row.resultRef])).get(row.resultRef)!;
    if (row.error !== null) record.error = row.error as ErrorData;
    if (row.endedAt !== null) record.endedAt = row.endedAt;
    if (row.expiresAt !== null) record.expiresAt = row.expiresAt;
    if (row.leaseOwner !== null && row.leaseExpiresAt !== null && row.leaseExpiresAt > new Date())
      record.holder = row.leaseOwner;
    return record;
  }
}

function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

const UNIQUE_VIOLATION = "23505";
const TOKEN_CACHE_MS = 5_000;
const PLAIN_KINDS = new Set(["call", "call.result", "call.error", "output"]);

/**
 * The rows of an append that needs nothing but journal rows (no value stored apart, no timer, no
 * inbox item, no end), or undefined.
 */
function plainStep(append: RunAppend): EntryRow[] | undefined {
  if (append.entries.length === 0 || append.entries.length > 8) return undefined;
  if ((append.inboxConsumed?.length ?? 0) > 0) return undefined;
  const rows: EntryRow[] = [];
  for (const entry of append.entries) {
    if (!PLAIN_KINDS.has(entry.kind)) return undefined;
    const { row, value } = encodeEntry(entry);
    if (value !== undefined) return undefined;
    rows.push(row);
  }
  return rows;
}
