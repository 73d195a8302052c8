-- Rewind schema 1: the journal and what surrounds it. Applied by `rewind migrate`.
-- Every table is prefixed `rw_` so Rewind can share a database with its users' own tables.

CREATE TABLE rw_namespaces (
  name        text PRIMARY KEY,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- API tokens are stored by their SHA-256; the token itself is shown once, when it is created.
CREATE TABLE rw_api_tokens (
  token_hash  text PRIMARY KEY,
  namespace   text NOT NULL REFERENCES rw_namespaces(name) ON DELETE CASCADE,
  label       text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  revoked_at  timestamptz
);

-- Scripts by the SHA-256 of their compiled code: immutable.
CREATE TABLE rw_scripts (
  hash        text PRIMARY KEY,
  entry       text NOT NULL,
  code        text NOT NULL,
  source_map  text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Values by the SHA-256 of their canonical JSON, stored once, as that canonical text (jsonb would
-- reorder keys). Up to 64 KiB inline; above, the canonical JSON lives in the blob store.
CREATE TABLE rw_values (
  ref         text PRIMARY KEY,
  body        text,
  blob_key    text,
  size        integer NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  CHECK ((body IS NULL) <> (blob_key IS NULL))
);

CREATE TABLE rw_runs (
  id                text PRIMARY KEY,
  namespace         text NOT NULL REFERENCES rw_namespaces(name),
  script_hash       text NOT NULL REFERENCES rw_scripts(hash),
  toolset           text NOT NULL,
  epoch             integer NOT NULL,
  status            text NOT NULL CHECK (status IN ('queued','running','waiting','completed','failed','cancelled','quarantined')),
  parent_id         text,
  parent_seq        integer,
  -- The lease: one owner executes the run; the token grows with every new lease (fencing).
  lease_owner       text,
  lease_token       bigint NOT NULL DEFAULT 0,
  lease_expires_at  timestamptz,
  -- Cold loads since the run last journaled progress: a run that keeps killing its process
  -- (a heap blow-up aborts it) is failed after a few, instead of taking every worker down.
  attempts          integer NOT NULL DEFAULT 0,
  -- A completed run's result: canonical JSON inline when small, else a reference into rw_values.
  result_json       text,
  result_ref        text,
  error             jsonb,
  ttl_ms            bigint NOT NULL,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  ended_at          timestamptz,
  expires_at        timestamptz
);
CREATE INDEX rw_runs_namespace_status ON rw_runs (namespace, status, created_at DESC);
CREATE INDEX rw_runs_open ON rw_runs (status) WHERE ended_at IS NULL;
CREATE INDEX rw_runs_expiry ON rw_runs (expires_at) WHERE expires_at IS NOT NULL;

-- The journal: (run_id, seq) with no gaps. Values are references into rw_values.
CREATE TABLE rw_journal (
  run_id    text NOT NULL REFERENCES rw_runs(id) ON DELETE CASCADE,
  seq       integer NOT NULL,
  kind      text NOT NULL,
  at        bigint NOT NULL,
  callsite  text,
  body      jsonb NOT NULL,
  PRIMARY KEY (run_id, seq)
);

-- Which values a run's journal refers to: lets retention delete values no run needs.
CREATE TABLE rw_run_values (
  run_id  text NOT NULL REFERENCES rw_runs(id) ON DELETE CASCADE,
  ref     text NOT NULL,
  PRIMARY KEY (run_id, ref)
);
CREATE INDEX rw_run_values_ref ON rw_run_values (ref);

-- External events waiting for the run's owner: only the owner turns them into journal entries.
CREATE TABLE rw_inbox (
  id            bigserial PRIMARY KEY,
  run_id        text NOT NULL REFERENCES rw_runs(id) ON DELETE CASCADE,
  kind          text NOT NULL CHECK (kind IN ('signal','cancel')),
  name          text,
  payload_ref   text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  consumed_seq  integer
);
CREATE INDEX rw_inbox_pending ON rw_inbox (run_id, id) WHERE consumed_seq IS NULL;

-- Timers set and not yet fired or cancelled: rows, so a ten-day sleep survives anything.
CREATE TABLE rw_timers (
  run_id     text NOT NULL REFERENCES rw_runs(id) ON DELETE CASCADE,
  timer_seq  integer NOT NULL,
  due_at     bigint NOT NULL,
  PRIMARY KEY (run_id, timer_seq)
);
CREATE INDEX rw_timers_due ON rw_timers (due_at);

-- One round trip, one commit, for a batch of appends from many runs (group commit).
-- For each run: the append happens only if the caller still holds the lease (owner and token)
-- and the journal ends exactly where the caller believes it does; otherwise that run's append is
-- refused ('lease_lost') and nothing of it is written, while the other runs' appends go through.
-- The fence is read, not written: the run's row is rewritten only when its status changes, which
-- keeps a tool call's commit close to the cost of inserting its journal rows. The (run_id, seq)
-- key is the last word: two appends after the same seq can never both commit.
CREATE FUNCTION rw_commit(batch jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  a jsonb;
  run text;
  after_seq integer;
  results jsonb := '[]'::jsonb;
BEGIN
  FOR a IN SELECT * FROM jsonb_array_elements(batch) LOOP
    run := a->>'runId';
    after_seq := (a->>'afterSeq')::integer;
    IF NOT EXISTS (SELECT 1 FROM rw_runs WHERE id = run AND lease_owner = a->>'owner' AND lease_token = (a->>'token')::bigint)
       OR NOT EXISTS (SELECT 1 FROM rw_journal WHERE run_id = run AND seq = after_seq)
       OR EXISTS (SELECT 1 FROM rw_journal WHERE run_id = run AND seq = after_seq + 1) THEN
      results := results || jsonb_build_array('lease_lost');
      CONTINUE;
    END IF;

    UPDATE rw_runs SET
        status     = a->>'status',
        attempts   = 0,
        result_json = COALESCE(a->>'resultJson', result_json),
        result_ref = COALESCE(a->>'resultRef', result_ref),
        error      = COALESCE(a->'error', error),
        ended_at   = CASE WHEN (a->>'ended')::boolean THEN now() ELSE ended_at END,
        expires_at = CASE WHEN (a->>'ended')::boolean THEN now() + ttl_ms * interval '1 millisecond' ELSE expires_at END,
        updated_at = now()
      WHERE id = run AND (status <> a->>'status' OR attempts > 0 OR (a->>'ended')::boolean);

    -- Most appends carry no value row, no timer and no inbox item: skip what is empty.
    IF jsonb_array_length(a->'values') > 0 THEN
      INSERT INTO rw_values (ref, body, blob_key, size)
        SELECT v->>'ref', v->>'body', v->>'blobKey', (v->>'size')::integer
        FROM jsonb_array_elements(a->'values') v
        ON CONFLICT (ref) DO NOTHING;
      INSERT INTO rw_run_values (run_id, ref)
        SELECT a->>'runId', v->>'ref' FROM jsonb_array_elements(a->'values') v
        ON CONFLICT DO NOTHING;
    END IF;
    INSERT INTO rw_journal (run_id, seq, kind, at, callsite, body)
      SELECT a->>'runId', (e->>'seq')::integer, e->>'kind', (e->>'at')::bigint, e->>'callsite', e->'body'
      FROM jsonb_array_elements(a->'entries') e;
    IF jsonb_array_length(a->'timersSet') > 0 THEN
      INSERT INTO rw_timers (run_id, timer_seq, due_at)
        SELECT a->>'runId', (t->>'seq')::integer, (t->>'due')::bigint FROM jsonb_array_elements(a->'timersSet') t;
    END IF;
    IF jsonb_array_length(a->'timersCleared') > 0 OR (a->>'ended')::boolean THEN
      DELETE FROM rw_timers
        WHERE run_id = a->>'runId'
          AND (timer_seq IN (SELECT (x#>>'{}')::integer FROM jsonb_array_elements(a->'timersCleared') x)
               OR (a->>'ended')::boolean);
    END IF;
    IF jsonb_array_length(a->'inboxConsumed') > 0 THEN
      UPDATE rw_inbox SET consumed_seq = (c->>'seq')::integer
        FROM jsonb_array_elements(a->'inboxConsumed') c
        WHERE rw_inbox.id = (c->>'id')::bigint AND rw_inbox.run_id = a->>'runId';
    END IF;
    results := results || jsonb_build_array('ok');
  END LOOP;
  RETURN results;
END;
$$;
