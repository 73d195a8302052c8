-- Rewind schema 9: start idempotency. A client may name a run's start with a key of its own
-- (the Idempotency-Key header of POST /v1/runs): starting again with the same key in the same
-- namespace finds the run the first start made, instead of making another.
--
-- request_digest is the SHA-256 of what the start asked for (script hash, input, toolset, seed if
-- given): the same key with another request is a conflict, not the old run. The unique index is
-- what makes a start and its retry race safely: the insert is ON CONFLICT DO NOTHING on it, so the
-- start path costs no round trip more than a start without a key. Partial: runs without a key
-- (all those before this migration) are not in it.
ALTER TABLE rw_runs ADD COLUMN idempotency_key text;
ALTER TABLE rw_runs ADD COLUMN request_digest text;
CREATE UNIQUE INDEX rw_runs_idempotency ON rw_runs (namespace, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
