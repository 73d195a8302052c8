-- Rewind schema 18: a start's load counted by a function, so the start statement can be prepared.
--
-- A start inserts its run and its first journal entry in one statement that also counts its
-- namespace's load (docs/limits.md). The counts' best plan depends on how many runs the namespace
-- has: a prepared statement's plan, cached while rw_runs was nearly empty (a new database's first
-- starts), kept reading every run of the namespace as it grew. So the statement was sent unnamed,
-- parsed and planned whole at every start: 0.8 ms of Postgres a start, more than it took to run.
-- Here the counts are planned at every call, with the table as it is and the namespace's value
-- (plan_cache_mode for this function only), and the start statement around them, whose inserts
-- plan the same at any size, is prepared once per connection.
--
-- The open runs are counted only when `last_count` (the last count this API process made, NULL
-- for none) plus the last second's starts could reach `runs_limit` (InFlightCounts); else
-- in_flight is NULL.
CREATE FUNCTION rw_start_load(ns text, last_count bigint, runs_limit bigint,
                              OUT in_flight bigint, OUT last_second bigint)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_custom_plan
AS $$
BEGIN
  SELECT count(*) INTO last_second FROM rw_runs
   WHERE namespace = ns AND created_at > now() - interval '1 second';
  IF last_count IS NULL OR last_count + last_second >= runs_limit THEN
    SELECT count(*) INTO in_flight FROM rw_runs
     WHERE namespace = ns AND status IN ('queued', 'running', 'waiting');
  END IF;
END;
$$;
