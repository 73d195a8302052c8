-- Rewind schema 19: a namespace's starts counted by counters, not by reading the last second's runs.
--
-- startsPerSecond was checked by counting the namespace's runs created in the last second
-- (rw_start_load, 0018): each start read as many rows as the namespace started in a second, so
-- the faster a namespace started runs, the more each start cost, and every statement of that
-- function was planned at each call. On a scratch database, starts through the store at sixteen
-- at once went from 2,600-2,700 a second to 5,000-5,500 with the counters, and one at a time
-- (about 1,600 a second) from 0.59-0.61 ms to 0.41-0.45 ms a start (p50).
--
-- Now each connection keeps its own counter row per namespace: the second it last started a run
-- in, its starts in that second, and its starts in the second before. A start reads its
-- namespace's rows (one per connection that started there lately, whatever the rate) and adds one
-- to its own. No two transactions in flight write the same row (a connection runs one at a time),
-- so counting takes no lock another start waits for, and the update changes no indexed column:
-- a HOT update. The last second is estimated from the two buckets, the earlier one weighted by
-- how much of it the last second still covers, rounded up (a sliding-window counter: exact when
-- the earlier second's starts were spread evenly over it). The open runs are still counted from
-- the rows when they could reach runsInFlight (InFlightCounts); both buckets together bound the
-- starts since the last count.
--
-- rw_admit_start decides and counts in one call: a start it admits counts, one it refuses does
-- not, and a statement that fails after it (the run's insert) takes its count back with it.
-- rw_start_load stays for API processes of schema 18 while a rolling upgrade replaces them
-- (their starts are not in the counters meanwhile).
CREATE TABLE rw_start_counts (
  namespace  text    NOT NULL,
  backend    integer NOT NULL,  -- pg_backend_pid() of the connection that counts here
  second     bigint  NOT NULL,  -- the last second (Unix time) it admitted a start in
  starts     integer NOT NULL,  -- its starts in that second
  before     integer NOT NULL,  -- its starts in the second before that one
  PRIMARY KEY (namespace, backend)
) WITH (fillfactor = 50);

CREATE FUNCTION rw_admit_start(ns text, last_count bigint, runs_limit bigint, starts_limit bigint,
                               OUT in_flight bigint, OUT last_second bigint, OUT admitted boolean)
LANGUAGE plpgsql
AS $$
DECLARE
  at      numeric := extract(epoch FROM now());
  s       bigint := floor(at);
  current bigint;
  earlier bigint;
  stale   bigint;
BEGIN
  SELECT coalesce(sum(c.starts) FILTER (WHERE c.second = s), 0),
         coalesce(sum(CASE WHEN c.second = s THEN c.before ELSE c.starts END)
                    FILTER (WHERE c.second BETWEEN s - 1 AND s), 0),
         count(*) FILTER (WHERE c.second < s - 60)
    INTO current, earlier, stale
    FROM rw_start_counts c WHERE c.namespace = ns;
  last_second := current + ceil(earlier * (1 - (at - s)));
  -- Runs in flight grow only by starts: the caller's last count (NULL for none), made less than
  -- a second ago (InFlightCounts), plus every start of both buckets bounds them.
  -- Planned at each count (EXECUTE), for the namespace's value and the table as it is: a plan
  -- cached while rw_runs was nearly empty read every run of the namespace once it grew (0018).
  -- The function's other statements read and write by key: their cached plans are the best.
  IF last_count IS NULL OR last_count + current + earlier >= runs_limit THEN
    EXECUTE 'SELECT count(*) FROM rw_runs WHERE namespace = $1 AND status IN (''queued'', ''running'', ''waiting'')'
       INTO in_flight USING ns;
  END IF;
  admitted := (runs_limit IS NULL OR coalesce(in_flight, 0) < runs_limit)
              AND (starts_limit IS NULL OR last_second < starts_limit);
  IF admitted THEN
    INSERT INTO rw_start_counts AS c (namespace, backend, second, starts, before)
    VALUES (ns, pg_backend_pid(), s, 1, 0)
    ON CONFLICT (namespace, backend) DO UPDATE SET
      before = CASE WHEN c.second = s THEN c.before WHEN c.second = s - 1 THEN c.starts ELSE 0 END,
      starts = CASE WHEN c.second = s THEN c.starts + 1 ELSE 1 END,
      second = s;
  END IF;
  -- Rows of connections that started nothing here for a minute (closed ones, most often) go
  -- once there are a few: what each start reads stays about as many rows as connections start.
  IF stale > 16 THEN
    DELETE FROM rw_start_counts c WHERE c.namespace = ns AND c.second < s - 60;
  END IF;
END;
$$;
