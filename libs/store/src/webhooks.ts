import { randomBytes } from "node:crypto";
import type { SqlClient } from "./sql.js";

/**
 * Webhooks (migration 0014, docs/webhooks.md): endpoints per namespace, one delivery row per
 * (endpoint, event), and the log of attempts. Delivery rows are made by the projector's webhook
 * sink in the transaction that moves its cursor (recordEvents), and sent by the dispatcher, which
 * claims due rows by pushing their next_attempt_at forward: a dispatcher killed mid-send leaves
 * the row due again once that claim expires, so no delivery is lost, none is sent twice at once.
 */

export interface WebhookEndpoint {
  id: string;
  namespace: string;
  url: string;
  description: string;
  /** Empty: every event type. */
  eventTypes: string[];
  enabled: boolean;
  disabledReason: string | null;
  failingSince: Date | null;
  createdAt: Date;
  updatedAt: Date;
  secret: string;
  /** The secret before the last rotation, while it still signs. */
  previousSecretUntil: Date | null;
}

/** An event a webhook sink turns into deliveries (one per matching endpoint). */
export interface WebhookEvent {
  /** The webhook-id header. */
  eventId: string;
  type: string;
  runId: string;
  seq: number;
  namespace: string;
  /** The commit time of the entry (µs): endpoints made after it are not sent it. */
  atUs: number;
  body: string;
}

export type DeliveryStatus = "pending" | "delivered" | "failed";

export interface WebhookDelivery {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  runId: string;
  seq: number;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: Date | null;
  lastAttemptAt: Date | null;
  lastStatus: number | null;
  lastError: string | null;
  deliveredAt: Date | null;
  createdAt: Date;
}

export interface WebhookAttempt {
  attempt: number;
  at: Date;
  status: number | null;
  error: string | null;
  durationMs: number;
  response: string | null;
}

/** A delivery claimed for one attempt, with what sending it needs. */
export interface DueDelivery {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  body: string;
  /** This attempt's number (1 for the first). */
  attempt: number;
  /** Attempts of the current schedule before this one (backoff counts from there). */
  tries: number;
  url: string;
  /** The current secret first, then the previous one while it still signs. */
  secrets: string[];
}

export interface AttemptOutcome {
  deliveryId: string;
  endpointId: string;
  attempt: number;
  ok: boolean;
  status?: number;
  error?: string;
  durationMs: number;
  response?: string;
  /** When failed: the next attempt's delay, or undefined to give up. */
  retryInMs?: number;
  /** An endpoint failing for longer than this is disabled. */
  disableAfterMs: number;
}

/** `whsec_` and 24 random bytes in base64: Standard Webhooks' form of a signing secret. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString("base64")}`;
}

export function newEndpointId(): string {
  return `wh_${randomBytes(8).toString("hex")}`;
}

const ENDPOINT_COLUMNS = `id, namespace, url, description, event_types, enabled, disabled_reason,
  failing_since, created_at, updated_at, secret, previous_secret_until`;

interface EndpointRow {
  id: string;
  namespace: string;
  url: string;
  description: string;
  event_types: string[];
  enabled: boolean;
  disabled_reason: string | null;
  failing_since: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
  secret: string;
  previous_secret_until: Date | string | null;
}

const date = (v: Date | string | null): Date | null => (v === null ? null : new Date(v));

function toEndpoint(r: EndpointRow): WebhookEndpoint {
  return {
    id: r.id,
    namespace: r.namespace,
    url: r.url,
    description: r.description,
    eventTypes: r.event_types,
    enabled: r.enabled,
    disabledReason: r.disabled_reason,
    failingSince: date(r.failing_since),
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    secret: r.secret,
    previousSecretUntil: date(r.previous_secret_until),
  };
}

const DELIVERY_COLUMNS = `id::text AS id, endpoint_id, event_id, event_type, run_id, seq, status,
  attempts, next_attempt_at, last_attempt_at, last_status, last_error, delivered_at, created_at`;

interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  run_id: string;
  seq: number;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date | string | null;
  last_attempt_at: Date | string | null;
  last_status: number | null;
  last_error: string | null;
  delivered_at: Date | string | null;
  created_at: Date | string;
}

function toDelivery(r: DeliveryRow): WebhookDelivery {
  return {
    id: r.id,
    endpointId: r.endpoint_id,
    eventId: r.event_id,
    eventType: r.event_type,
    runId: r.run_id,
    seq: Number(r.seq),
    status: r.status,
    attempts: Number(r.attempts),
    nextAttemptAt: r.status === "pending" ? date(r.next_attempt_at) : null,
    lastAttemptAt: date(r.last_attempt_at),
    lastStatus: r.last_status === null ? null : Number(r.last_status),
    lastError: r.last_error,
    deliveredAt: date(r.delivered_at),
    createdAt: new Date(r.created_at),
  };
}

/** A claimed delivery's row, as claimCtes returns it. */
interface DueRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  body: string;
  attempts: number;
  retry_from: number;
  url: string;
  secret: string;
  previous_secret: string | null;
}

/**
 * The claim of due deliveries as CTEs (`due`, `claimed`), its parameters from `$first`: the
 * limit, the claim's length in ms, and the ids it must leave alone (a record in the same
 * statement writes them: a row is written once a statement).
 */
function claimCtes(first: number): string {
  const [limit, claimMs, skip] = [first, first + 1, first + 2].map((n) => `$${n}`);
  return `due AS (
       SELECT d.id FROM rw_webhook_deliveries d JOIN rw_webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND e.enabled
          AND d.id <> ALL (${skip}::bigint[])
        ORDER BY d.next_attempt_at LIMIT ${limit} FOR UPDATE OF d SKIP LOCKED),
     claimed AS (
       UPDATE rw_webhook_deliveries d SET attempts = d.attempts + 1, last_attempt_at = now(),
              next_attempt_at = now() + ${claimMs} * interval '1 millisecond'
         FROM due, rw_webhook_endpoints e
        WHERE d.id = due.id AND e.id = d.endpoint_id
       RETURNING d.id::text AS id, d.endpoint_id, d.event_id, d.event_type, d.body, d.attempts,
                 d.retry_from, e.url, e.secret,
                 CASE WHEN e.previous_secret_until > now() THEN e.previous_secret END AS previous_secret)`;
}

function toDue(r: DueRow): DueDelivery {
  return {
    id: r.id,
    endpointId: r.endpoint_id,
    eventId: r.event_id,
    eventType: r.event_type,
    body: r.body,
    attempt: Number(r.attempts),
    tries: Number(r.attempts) - 1 - Number(r.retry_from),
    url: r.url,
    secrets: r.previous_secret === null ? [r.secret] : [r.secret, r.previous_secret],
  };
}

export class WebhookRows {
  constructor(private readonly sql: SqlClient) {}

  async createEndpoint(
    namespace: string,
    endpoint: { url: string; description: string; eventTypes: readonly string[]; enabled: boolean },
  ): Promise<WebhookEndpoint> {
    const rows = await this.sql.query<EndpointRow>(
      `INSERT INTO rw_webhook_endpoints (id, namespace, url, description, event_types, secret, enabled, disabled_reason)
       VALUES ($1, $2, $3, $4, $5::text[], $6, $7, CASE WHEN $7 THEN NULL ELSE 'disabled at creation' END)
       RETURNING ${ENDPOINT_COLUMNS}`,
      [
        newEndpointId(),
        namespace,
        endpoint.url,
        endpoint.description,
        [...endpoint.eventTypes],
        newWebhookSecret(),
        endpoint.enabled,
      ],
    );
    return toEndpoint(rows[0]!);
  }

  async listEndpoints(namespace: string): Promise<WebhookEndpoint[]> {
    const rows = await this.sql.query<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM rw_webhook_endpoints WHERE namespace = $1 ORDER BY created_at, id`,
      [namespace],
    );
    return rows.map(toEndpoint);
  }

  async getEndpoint(namespace: string, id: string): Promise<WebhookEndpoint | undefined> {
    const rows = await this.sql.query<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM rw_webhook_endpoints WHERE namespace = $1 AND id = $2`,
      [namespace, id],
    );
    return rows[0] && toEndpoint(rows[0]);
  }

  /** Deletes an endpoint and its deliveries (pending ones are not sent). */
  async deleteEndpoint(namespace: string, id: string): Promise<boolean> {
    const rows = await this.sql.query(
      "DELETE FROM rw_webhook_endpoints WHERE namespace = $1 AND id = $2 RETURNING id",
      [namespace, id],
    );
    return rows.length > 0;
  }

  /** A new secret; the old one keeps signing for `keepPreviousMs` (0: at once invalid). */
  async rotateSecret(
    namespace: string,
    id: string,
    keepPreviousMs: number,
  ): Promise<WebhookEndpoint | undefined> {
    const rows = await this.sql.query<EndpointRow>(
      `UPDATE rw_webhook_endpoints SET previous_secret = secret,
              previous_secret_until = now() + $3 * interval '1 millisecond',
              secret = $4, updated_at = now()
        WHERE namespace = $1 AND id = $2 RETURNING ${ENDPOINT_COLUMNS}`,
      [namespace, id, keepPreviousMs, newWebhookSecret()],
    );
    return rows[0] && toEndpoint(rows[0]);
  }

  /** Enables (and forgets its failures) or disables an endpoint. */
  async setEnabled(
    namespace: string,
    id: string,
    enabled: boolean,
    reason: string,
  ): Promise<WebhookEndpoint | undefined> {
    const rows = await this.sql.query<EndpointRow>(
      `UPDATE rw_webhook_endpoints SET enabled = $3,
              disabled_reason = CASE WHEN $3 THEN NULL ELSE $4 END,
              failing_since = CASE WHEN $3 THEN NULL ELSE failing_since END, updated_at = now()
        WHERE namespace = $1 AND id = $2 RETURNING ${ENDPOINT_COLUMNS}`,
      [namespace, id, enabled, reason],
    );
    return rows[0] && toEndpoint(rows[0]);
  }

  /** An endpoint's deliveries, newest first, before the delivery id `before` when given. */
  async listDeliveries(
    endpointId: string,
    options: { limit: number; before?: string; status?: DeliveryStatus },
  ): Promise<WebhookDelivery[]> {
    const rows = await this.sql.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM rw_webhook_deliveries
        WHERE endpoint_id = $1 AND ($2::bigint IS NULL OR id < $2::bigint)
          AND ($3::text IS NULL OR status = $3)
        ORDER BY id DESC LIMIT $4`,
      [endpointId, options.before ?? null, options.status ?? null, options.limit],
    );
    return rows.map(toDelivery);
  }

  async getDelivery(
    endpointId: string,
    id: string,
  ): Promise<{ delivery: WebhookDelivery; body: string; attempts: WebhookAttempt[] } | undefined> {
    const rows = await this.sql.query<DeliveryRow & { body: string }>(
      `SELECT ${DELIVERY_COLUMNS}, body FROM rw_webhook_deliveries WHERE endpoint_id = $1 AND id = $2::bigint`,
      [endpointId, id],
    );
    if (rows[0] === undefined) return undefined;
    const attempts = await this.sql.query<{
      attempt: number;
      at: Date | string;
      status: number | null;
      error: string | null;
      duration_ms: number;
      response: string | null;
    }>(
      `SELECT attempt, at, status, error, duration_ms, response FROM rw_webhook_attempts
        WHERE delivery_id = $1::bigint ORDER BY attempt`,
      [id],
    );
    return {
      delivery: toDelivery(rows[0]),
      body: rows[0].body,
      attempts: attempts.map((a) => ({
        attempt: Number(a.attempt),
        at: new Date(a.at),
        status: a.status === null ? null : Number(a.status),
        error: a.error,
        durationMs: Number(a.duration_ms),
        response: a.response,
      })),
    };
  }

  /** Sends a delivery again, as soon as a dispatcher looks, with a new retry schedule. */
  async redeliver(endpointId: string, id: string): Promise<WebhookDelivery | undefined> {
    const rows = await this.sql.query<DeliveryRow>(
      `UPDATE rw_webhook_deliveries SET status = 'pending', next_attempt_at = now(), retry_from = attempts
        WHERE endpoint_id = $1 AND id = $2::bigint RETURNING ${DELIVERY_COLUMNS}`,
      [endpointId, id],
    );
    return rows[0] && toDelivery(rows[0]);
  }

  /**
   * The webhook sink's window: the deliveries its events make, and its cursor's move from `from`
   * to `to`, in one statement (atomic by itself). A crash before its commit leaves both undone
   * (the window is read again); after it, both are done: no event is lost or turned into
   * deliveries twice. Answers the deliveries made, or undefined when the cursor had moved
   * (another projector did it): then nothing is made. Without a cursor (a backfill) it makes only
   * the deliveries an event lacks.
   *
   * One statement, not a transaction of three (BEGIN, the deliveries, the cursor, COMMIT): a
   * window of this sink is a few a second under load, and each round trip costs the projector
   * more CPU than the events it carries.
   */
  async recordEvents(
    events: readonly WebhookEvent[],
    cursor?: { sink: string; from: bigint; to: bigint },
  ): Promise<number | undefined> {
    const rows = JSON.stringify(
      events.map((e) => ({
        event_id: e.eventId,
        type: e.type,
        run_id: e.runId,
        seq: e.seq,
        namespace: e.namespace,
        at_us: e.atUs,
        body: e.body,
      })),
    );
    const insert = (guard: string) =>
      `INSERT INTO rw_webhook_deliveries (endpoint_id, event_id, event_type, run_id, seq, body, next_attempt_at)
       SELECT e.id, ev.event_id, ev.type, ev.run_id, ev.seq, ev.body, now()
         FROM jsonb_to_recordset($1::jsonb)
                AS ev (event_id text, type text, run_id text, seq integer, namespace text, at_us bigint, body text)
         JOIN rw_webhook_endpoints e
           ON e.namespace = ev.namespace AND e.enabled
          AND (cardinality(e.event_types) = 0 OR ev.type = ANY (e.event_types))
          AND e.created_at <= to_timestamp(ev.at_us / 1000000.0)
        ${guard}
       ON CONFLICT (endpoint_id, event_id) DO NOTHING
       RETURNING id`;
    if (cursor === undefined) return (await this.sql.query(insert(""), [rows])).length;
    // The cursor row is locked first: a projector that moved it meanwhile leaves it elsewhere
    // (read again once the lock is had), and then nothing is made or moved.
    const [done] = await this.sql.query<{ moved: number; made: number }>(
      `WITH here AS (
         SELECT sink FROM rw_projection_cursors WHERE sink = $2 AND below_xid = $3 FOR UPDATE),
       made AS (${insert("WHERE EXISTS (SELECT 1 FROM here)")}),
       moved AS (
         UPDATE rw_projection_cursors SET below_xid = $4,
                delivered = delivered + (SELECT count(*) FROM made), updated_at = now()
          WHERE sink = (SELECT sink FROM here) RETURNING sink)
       SELECT (SELECT count(*) FROM moved)::int AS moved, (SELECT count(*) FROM made)::int AS made`,
      [rows, cursor.sink, cursor.from.toString(), cursor.to.toString()],
    );
    return done!.moved === 0 ? undefined : done!.made;
  }

  /**
   * Claims up to `limit` due deliveries of enabled endpoints for one attempt each: their
   * next_attempt_at moves `claimMs` ahead, so another dispatcher skips them, and a dispatcher
   * that dies mid-send leaves them due again then (at least once, never lost).
   */
  async claimDue(limit: number, claimMs: number): Promise<DueDelivery[]> {
    return (
      await this.sql.query<DueRow>(`WITH ${claimCtes(1)} SELECT * FROM claimed`, [
        limit,
        claimMs,
        [],
      ])
    ).map(toDue);
  }

  /**
   * What attempts came back with, in one transaction (the dispatcher records the outcomes that
   * arrived while its last record was committing: one commit for many deliveries): the log rows,
   * each delivery's state (only if its claim is still that attempt's) and each endpoint's failure
   * clock, as if recorded one by one in order. Answers, per outcome, whether its endpoint was
   * disabled by it (failing for longer than `disableAfterMs`), and the deliveries claimed with
   * `claim` (as claimDue would): the slots the outcomes free are filled in the same round trip,
   * not one more.
   */
  async recordAttempts(
    outcomes: readonly AttemptOutcome[],
    claim?: { limit: number; claimMs: number },
  ): Promise<{ outcomes: { disabled: boolean }[]; claimed: DueDelivery[] }> {
    if (outcomes.length === 0)
      return {
        outcomes: [],
        claimed: claim === undefined ? [] : await this.claimDue(claim.limit, claim.claimMs),
      };
    const column = <T>(pick: (o: AttemptOutcome) => T) => outcomes.map(pick);
    const params = [
      column((o) => o.deliveryId),
      column((o) => o.attempt),
      column((o) => o.status ?? null),
      column((o) => o.error ?? null),
      column((o) => Math.round(o.durationMs)),
      column((o) => o.response ?? null),
      column((o) => o.ok),
      column((o) => !o.ok && o.retryInMs === undefined),
      column((o) => o.retryInMs ?? 0),
    ];
    // The log rows and each delivery's state (only if its claim is still that attempt's).
    const logAndState = `logged AS (
         INSERT INTO rw_webhook_attempts (delivery_id, attempt, status, error, duration_ms, response)
         SELECT * FROM unnest($1::bigint[], $2::int[], $3::int[], $4::text[], $5::int[], $6::text[])
         ON CONFLICT DO NOTHING),
       state AS (
         UPDATE rw_webhook_deliveries d SET
            status = CASE WHEN o.ok THEN 'delivered' WHEN o.give_up THEN 'failed' ELSE 'pending' END,
            delivered_at = CASE WHEN o.ok THEN now() ELSE d.delivered_at END,
            next_attempt_at = CASE WHEN o.ok OR o.give_up THEN NULL
                                   ELSE now() + o.retry_ms * interval '1 millisecond' END,
            last_status = o.status, last_error = o.error
           FROM unnest($1::bigint[], $2::int[], $7::bool[], $8::bool[], $9::int[], $3::int[], $4::text[])
                AS o(id, attempt, ok, give_up, retry_ms, status, error)
          WHERE d.id = o.id AND d.attempts = o.attempt AND d.status = 'pending')`;
    // The claim leaves the recorded deliveries alone: they are written once, by the record.
    const claimParams = (claimed: { limit: number; claimMs: number }) => [
      claimed.limit,
      claimed.claimMs,
      column((o) => o.deliveryId),
    ];
    if (outcomes.every((o) => o.ok)) {
      // Successes only, as nearly all are: one statement (atomic by itself, one round trip and
      // one commit) that also stops each endpoint's failure clock, and claims what is due.
      const claimed = await this.sql.query<DueRow>(
        `WITH ${logAndState},
           cleared AS (
             UPDATE rw_webhook_endpoints SET failing_since = NULL
              WHERE id = ANY($10::text[]) AND failing_since IS NOT NULL),
           ${claimCtes(11)}
         SELECT * FROM claimed`,
        [
          ...params,
          [...new Set(column((o) => o.endpointId))],
          ...claimParams(claim ?? { limit: 0, claimMs: 0 }),
        ],
      );
      return { outcomes: outcomes.map(() => ({ disabled: false })), claimed: claimed.map(toDue) };
    }
    return this.sql.transaction(async (tx) => {
      await tx.query(`WITH ${logAndState} SELECT 1`, params);
      // Each endpoint's clock as its outcomes in order would leave it: a success clears it, a
      // failure starts it (or keeps it running) and may disable the endpoint.
      const disabled = new Map<string, boolean>();
      const byEndpoint = new Map<string, AttemptOutcome[]>();
      for (const o of outcomes)
        (byEndpoint.get(o.endpointId) ?? byEndpoint.set(o.endpointId, []).get(o.endpointId)!).push(
          o,
        );
      for (const [endpointId, own] of byEndpoint) {
        let lastFailure = own.length - 1;
        while (lastFailure >= 0 && own[lastFailure]!.ok) lastFailure--;
        if (lastFailure < 0) {
          // Successes only: the clock stops.
          await tx.query(
            "UPDATE rw_webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL",
            [endpointId],
          );
          continue;
        }
        // A success after its last failure stops the clock; one before it restarts it.
        if (lastFailure < own.length - 1 || own.slice(0, lastFailure).some((o) => o.ok))
          await tx.query(
            "UPDATE rw_webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL",
            [endpointId],
          );
        if (lastFailure < own.length - 1) continue;
        const rows = await tx.query<{ disabled: boolean }>(
          `UPDATE rw_webhook_endpoints e SET
              failing_since = COALESCE(e.failing_since, now()),
              enabled = NOT past.over AND e.enabled,
              disabled_reason = CASE WHEN past.over AND e.enabled
                THEN 'every attempt failed since ' || to_char(e.failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                ELSE e.disabled_reason END,
              updated_at = CASE WHEN past.over AND e.enabled THEN now() ELSE e.updated_at END
             FROM (SELECT COALESCE(failing_since < now() - $2 * interval '1 millisecond', false) AS over
                     FROM rw_webhook_endpoints WHERE id = $1) past
            WHERE e.id = $1
           RETURNING (past.over AND NOT e.enabled) AS disabled`,
          [endpointId, own[lastFailure]!.disableAfterMs],
        );
        disabled.set(endpointId, rows[0]?.disabled === true);
      }
      const claimed =
        claim === undefined
          ? []
          : await tx.query<DueRow>(
              `WITH ${claimCtes(1)} SELECT * FROM claimed`,
              claimParams(claim),
            );
      return {
        outcomes: outcomes.map((o) => ({ disabled: !o.ok && disabled.get(o.endpointId) === true })),
        claimed: claimed.map(toDue),
      };
    });
  }

  /**
   * Forgets finished deliveries (delivered or given up) created more than `olderThanMs` ago,
   * with their attempts: the log is kept that long. Pending ones are kept whatever their age.
   * At most `limit` a call, so one call never holds a long transaction.
   */
  async pruneLog(olderThanMs: number, limit = 1000): Promise<number> {
    const rows = await this.sql.query(
      `DELETE FROM rw_webhook_deliveries WHERE id IN (
         SELECT id FROM rw_webhook_deliveries
          WHERE status <> 'pending' AND created_at < now() - $1 * interval '1 millisecond'
          ORDER BY id LIMIT $2)
       RETURNING id`,
      [olderThanMs, limit],
    );
    return rows.length;
  }

  /** Deliveries waiting to be sent (due now or later), for the backlog gauge. */
  async pendingCount(): Promise<number> {
    const rows = await this.sql.query<{ n: string }>(
      "SELECT count(*)::text AS n FROM rw_webhook_deliveries WHERE status = 'pending'",
    );
    return Number(rows[0]!.n);
  }
}
