-- Rewind schema 3: quarantine. Applied by `rewind migrate`.
--
-- A run whose replay diverges from its journal is quarantined by the worker that found it: a
-- run.quarantined entry with the divergence report, status 'quarantined' (its timers do not fire,
-- its signals wait in its inbox). Operators then release it (a replay on its own or another epoch)
-- or give up on it (it fails). Their requests go to the run's inbox, like signals and cancels, and
-- only the quarantine service, holding the run's lease, turns one into a journal entry
-- (run.released or run.failed), consuming the request in the same commit.

ALTER TABLE rw_inbox DROP CONSTRAINT rw_inbox_kind_check;
ALTER TABLE rw_inbox ADD CONSTRAINT rw_inbox_kind_check
  CHECK (kind IN ('signal', 'cancel', 'release', 'give-up'));

-- The quarantine service's work list: operators' requests not yet acted on, oldest first.
CREATE INDEX rw_inbox_quarantine_requests ON rw_inbox (id)
  WHERE consumed_seq IS NULL AND kind IN ('release', 'give-up');

-- Live runs per epoch: what `rewind epochs` shows, and which epochs still need workers.
CREATE INDEX rw_runs_open_epoch ON rw_runs (epoch, status) WHERE ended_at IS NULL;
