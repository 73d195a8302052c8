-- Rewind schema 12: what the projections of the journal (traces, later webhooks) need, written in
-- the same commit as the entries, and one durable cursor per sink (docs/traces.md).

-- Every journal row says which transaction wrote it and when (its wall time). Both are column
-- defaults, so no statement of the hot path changes: pg_current_xact_id() is the id the insert
-- already took, now() the transaction's start.
--
-- The projector's cursor is a transaction id, not a serial. A serial is taken when a row is
-- inserted, not when it commits, so a row with a smaller number can become visible after a larger
-- one was read: a cursor past it skips it for ever. pg_snapshot_xmin(pg_current_snapshot()) is the
-- oldest transaction still running: every transaction below it has committed or aborted, so the
-- rows with an xid below it are final, and a cursor that never passes it never skips one.
ALTER TABLE rw_journal
  ADD COLUMN xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
  ADD COLUMN committed_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX rw_journal_xid ON rw_journal (xid);

-- The W3C traceparent of the request that started the run, when it had one: its trace id names
-- the run's trace. Written with run.started, in the same transaction.
ALTER TABLE rw_runs ADD COLUMN traceparent text;

-- One row per activation that journaled something (hot or cold), written by its first commit.
CREATE TABLE rw_activations (
  run_id               text NOT NULL,
  -- The first entry the activation appended.
  seq                  integer NOT NULL,
  kind                 text NOT NULL CHECK (kind IN ('hot', 'cold')),
  -- Journal entries replayed before it went live (0 for a hot one).
  replayed             integer NOT NULL,
  -- The lease's attempt count: cold loads since the run last journaled progress.
  attempt              integer NOT NULL,
  -- From the ring to a worker taking it, when it came through the queue.
  schedule_to_start_ms integer,
  started_at           timestamptz NOT NULL,
  committed_at         timestamptz NOT NULL DEFAULT now(),
  xid                  xid8 NOT NULL DEFAULT pg_current_xact_id(),
  PRIMARY KEY (run_id, seq)
);
CREATE INDEX rw_activations_xid ON rw_activations (xid);

-- One cursor per sink: every row whose xid is below `below_xid` was delivered to the sink.
CREATE TABLE rw_projection_cursors (
  sink        text PRIMARY KEY,
  below_xid   bigint NOT NULL,
  delivered   bigint NOT NULL DEFAULT 0,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- rw_commit as in 0004, and the activation row.
CREATE OR REPLACE FUNCTION rw_commit(batch jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
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
        lease_owner = CASE WHEN (a->>'release')::boolean THEN NULL ELSE lease_owner END,
        lease_expires_at = CASE WHEN (a->>'release')::boolean THEN NULL ELSE lease_expires_at END,
        updated_at = now()
      WHERE id = run AND (status <> a->>'status' OR attempts > 0 OR (a->>'ended')::boolean
                          OR (a->>'release')::boolean);

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
    -- The activation this append opens (its first commit), for the projections: same commit.
    IF a ? 'activation' THEN
      INSERT INTO rw_activations (run_id, seq, kind, replayed, attempt, schedule_to_start_ms, started_at)
        VALUES (run, after_seq + 1, a#>>'{activation,kind}', (a#>>'{activation,replayed}')::integer,
                (a#>>'{activation,attempt}')::integer, (a#>>'{activation,scheduleToStartMs}')::integer,
                to_timestamp((a#>>'{activation,startedAt}')::double precision / 1000))
        ON CONFLICT DO NOTHING;
    END IF;
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
