-- Rewind schema 7: deaths of a run's sandbox process, counted against the run that was executing.
--
-- Scripts run in supervised sandbox processes. When one dies (V8 aborts a process whose isolate
-- cannot satisfy one huge allocation), the supervisor, which lives on, knows which run was
-- executing at that moment and records the death here before that run is loaded again. Only
-- that run is charged: the other runs of the dead process are simply loaded again elsewhere.
--
-- Progress means passing the seq where the last death happened: a death at a later seq than
-- death_seq starts the count again at 1. A tool call re-run on load is no progress (it journals
-- nothing new), so a script that dies right after a call cannot reset its own count. death_cause
-- is what the process said as it died (V8's fatal line), named in the CRASH_LOOP verdict.
ALTER TABLE rw_runs ADD COLUMN deaths integer NOT NULL DEFAULT 0;
ALTER TABLE rw_runs ADD COLUMN death_seq integer NOT NULL DEFAULT 0;
ALTER TABLE rw_runs ADD COLUMN death_cause text;
