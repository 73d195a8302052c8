-- Rewind schema 17: a new run's first commit may take its lease (issue 18's start hops).
--
-- A first ring that carries the whole run.started (FirstActivation.started) lets its worker run
-- the script's top level at once, before it has read anything, and commit what it produced with
-- a claim: the lease goes to that worker with the run's first token in the same statement, and
-- only while no one ever took the run (token 0, no owner), it is still queued in the epoch the
-- worker ran it in, its journal is its start alone (the usual fence: seq 1 exists, seq 2 does not)
-- and is the very start the worker ran (the ring lives in Redis: one forged there makes a commit
-- that is refused, never a run of someone else's input), and no signal or cancel waits in its
-- inbox. Anything else refuses the claim with nothing
-- written, and the worker takes the usual path: lease, read, replay. The run's first commit then
-- costs no round trip of its own for the lease.
--
-- rw_commit as in 0012, with the claim.
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
    -- A new run's first commit, made before anyone read it: it takes the lease, and only while
    -- no one ever took it. Refused, the row is as it was: the fence below then refuses the rest.
    -- The status goes with the lease, so the row's update below is skipped unless the run ended:
    -- one new version of the row (its indexes hold the status) instead of two.
    IF a ? 'claim' THEN
      UPDATE rw_runs SET lease_owner = a->>'owner', lease_token = (a->>'token')::bigint,
             lease_expires_at = now() + (a#>>'{claim,ttlMs}')::integer * interval '1 millisecond',
             attempt_seq = after_seq, status = a->>'status', updated_at = now()
       WHERE id = run AND lease_token = 0 AND lease_owner IS NULL AND status = 'queued'
         AND epoch = (a#>>'{claim,epoch}')::integer AND after_seq = 1
         AND EXISTS (SELECT 1 FROM rw_journal j
                      WHERE j.run_id = run AND j.seq = 1 AND j.kind = 'run.started'
                        AND j.at = (a#>>'{claim,at}')::bigint AND j.body = a#>'{claim,body}')
         AND NOT EXISTS (SELECT 1 FROM rw_inbox i WHERE i.run_id = run AND i.consumed_seq IS NULL);
      IF NOT FOUND THEN
        results := results || jsonb_build_array('lease_lost');
        CONTINUE;
      END IF;
    END IF;
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
