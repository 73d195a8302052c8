-- The hot path of a run (its lease, its steps) with less work in each statement.

-- Crash-loop accounting moves to the lease. A worker taking a run's lease counts an attempt, and
-- the count starts again at 1 when the journal grew since the last count (attempt_seq is the
-- journal's end then). Before, every commit reset the count, so a run's first step after a load
-- had to update its row; now a hot step is journal rows only. Taking the lease of a queued run
-- also marks it running, which its first step did before, for the same reason.
ALTER TABLE rw_runs ADD COLUMN attempt_seq integer NOT NULL DEFAULT 0;

-- One index of open runs instead of two. With (epoch, status) leading an index of its own, the
-- lease's `epoch = ANY(...)` made that index look as good as the primary key to a planner with
-- stale statistics (a young table under load), and taking a lease scanned every open run of the
-- epoch. (status, epoch) serves the stranded-run and quarantine queries by status and the
-- per-epoch counts (an index-only scan), and is one index fewer to update when a status changes.
DROP INDEX rw_runs_open_epoch;
DROP INDEX rw_runs_open;
CREATE INDEX rw_runs_open ON rw_runs (status, epoch) WHERE ended_at IS NULL;

-- Journal rows no longer carry a foreign key to their run. The key's check ran a trigger per row,
-- with a row lock on the run (FOR KEY SHARE): the costliest part of the hottest statement. Every
-- append is fenced in its own statement by the run's lease (so the run exists and is held), and
-- retention deletes a run's journal with the run.
ALTER TABLE rw_journal DROP CONSTRAINT rw_journal_run_id_fkey;
