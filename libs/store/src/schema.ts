import {
  bigint,
  bigserial,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
} from "drizzle-orm/pg-core";

/** The tables of migrations/*.sql, for typed queries. The SQL files are the truth. */

export const namespaces = pgTable("rw_namespaces", {
  name: text("name").primaryKey(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

export const apiTokens = pgTable("rw_api_tokens", {
  tokenHash: text("token_hash").primaryKey(),
  namespace: text("namespace").notNull(),
  label: text("label").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  revokedAt: timestamp("revoked_at", { withTimezone: true }),
});

export const scripts = pgTable(
  "rw_scripts",
  {
    namespace: text("namespace").notNull(),
    hash: text("hash").notNull(),
    entry: text("entry").notNull(),
    code: text("code").notNull(),
    sourceMap: text("source_map").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.namespace, t.hash] })],
);

export const values = pgTable("rw_values", {
  ref: text("ref").primaryKey(),
  body: text("body"),
  blobKey: text("blob_key"),
  size: integer("size").notNull(),
});

export const runs = pgTable("rw_runs", {
  id: text("id").primaryKey(),
  namespace: text("namespace").notNull(),
  scriptHash: text("script_hash").notNull(),
  toolset: text("toolset").notNull(),
  epoch: integer("epoch").notNull(),
  status: text("status").notNull(),
  parentId: text("parent_id"),
  parentSeq: integer("parent_seq"),
  leaseOwner: text("lease_owner"),
  leaseToken: bigint("lease_token", { mode: "number" }).notNull(),
  leaseExpiresAt: timestamp("lease_expires_at", { withTimezone: true }),
  attempts: integer("attempts").notNull(),
  /** The journal's end when the attempts were last counted (migration 0005). */
  attemptSeq: integer("attempt_seq").notNull().default(0),
  /** Sandbox process deaths while this run executed, at death_seq (migration 0007). */
  deaths: integer("deaths").notNull().default(0),
  deathSeq: integer("death_seq").notNull().default(0),
  deathCause: text("death_cause"),
  resultJson: text("result_json"),
  resultRef: text("result_ref"),
  error: jsonb("error"),
  ttlMs: bigint("ttl_ms", { mode: "number" }).notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull(),
  endedAt: timestamp("ended_at", { withTimezone: true }),
  expiresAt: timestamp("expires_at", { withTimezone: true }),
  /** The W3C traceparent of the request that started the run, if any (migration 0012). */
  traceparent: text("traceparent"),
});

export const journal = pgTable(
  "rw_journal",
  {
    runId: text("run_id").notNull(),
    seq: integer("seq").notNull(),
    kind: text("kind").notNull(),
    at: bigint("at", { mode: "number" }).notNull(),
    callsite: text("callsite"),
    body: jsonb("body").notNull(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.seq] })],
);

export const inbox = pgTable("rw_inbox", {
  id: bigserial("id", { mode: "number" }).primaryKey(),
  runId: text("run_id").notNull(),
  kind: text("kind").notNull(),
  name: text("name"),
  payloadRef: text("payload_ref"),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  consumedSeq: integer("consumed_seq"),
});

export const timers = pgTable(
  "rw_timers",
  {
    runId: text("run_id").notNull(),
    timerSeq: integer("timer_seq").notNull(),
    dueAt: bigint("due_at", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.timerSeq] })],
);

/** migrations/0002_toolsets.sql: toolsets as the workers that run them describe them. */
export const toolsets = pgTable("rw_toolsets", {
  name: text("name").primaryKey(),
  tools: jsonb("tools").notNull(),
  publishedBy: text("published_by").notNull(),
  publishedAt: timestamp("published_at", { withTimezone: true }).notNull().defaultNow(),
});
