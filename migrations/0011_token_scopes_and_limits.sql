-- Rewind schema 11: API token scopes, and per-namespace limits.
--
-- A token's scopes say what it may do (docs/tokens.md has the table, endpoint by endpoint):
-- read, run, operate, metrics. Tokens made before scopes existed could do everything but scrape
-- metrics, so they get read, run and operate: none of them stops working.
ALTER TABLE rw_api_tokens ADD COLUMN scopes text[] NOT NULL DEFAULT ARRAY['read', 'run', 'operate'];
ALTER TABLE rw_api_tokens ALTER COLUMN scopes DROP DEFAULT;
-- A token is named, listed and revoked by the first 16 hex digits of its hash ("tok_" + them):
-- the plaintext is never stored, and the id says nothing of it.
CREATE INDEX rw_api_tokens_by_namespace ON rw_api_tokens (namespace, created_at);

-- Limits a namespace sets for itself; a NULL column takes the default from the configuration
-- (REWIND_LIMIT_* of the processes that enforce it). No row: every limit at its default.
CREATE TABLE rw_namespace_limits (
  namespace          text PRIMARY KEY REFERENCES rw_namespaces(name) ON DELETE CASCADE,
  runs_in_flight     integer CHECK (runs_in_flight > 0),
  starts_per_second  integer CHECK (starts_per_second > 0),
  journal_entries    integer CHECK (journal_entries > 0),
  journal_bytes      bigint CHECK (journal_bytes > 0),
  output_bytes       bigint CHECK (output_bytes > 0),
  timers             integer CHECK (timers > 0),
  updated_at         timestamptz NOT NULL DEFAULT now()
);
-- The starts of a namespace's last second, counted at each start (limit startsPerSecond).
CREATE INDEX rw_runs_namespace_created ON rw_runs (namespace, created_at);
