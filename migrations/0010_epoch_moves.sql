-- Rewind schema 10: moving open runs between determinism epochs (`rewind epochs migrate`).
--
-- An operator asks to move a namespace's open runs of epoch `from_epoch` onto `to_epoch` (a
-- check). A worker serving `to_epoch` takes the check (`taken_by`, retaken when its taker is
-- silent for long: crash-only), replays each run with its own runtime and guest, and writes its
-- verdicts in `report` when done. A run whose replay matches is moved: its row's epoch changes
-- and a row of rw_epoch_moves says who moved it, from where to where, and at which seq the replay
-- was checked, in one transaction that applies only if the run's journal still ends at that seq
-- and the checker still holds the run's lease (compare-and-set). The journal itself is not
-- touched: its entries are what the run did, and every build reads them as before; the run's
-- epoch history is its run.started epoch, its run.released entries and these rows.
CREATE TABLE rw_epoch_checks (
  id            bigserial PRIMARY KEY,
  namespace     text NOT NULL REFERENCES rw_namespaces(name),
  from_epoch    integer NOT NULL,
  to_epoch      integer NOT NULL CHECK (to_epoch <> from_epoch),
  requested_by  text NOT NULL,
  dry_run       boolean NOT NULL,
  requested_at  timestamptz NOT NULL DEFAULT now(),
  taken_by      text,
  taken_at      timestamptz,
  finished_at   timestamptz,
  report        jsonb
);
CREATE INDEX rw_epoch_checks_pending ON rw_epoch_checks (to_epoch, id) WHERE finished_at IS NULL;

CREATE TABLE rw_epoch_moves (
  run_id       text NOT NULL REFERENCES rw_runs(id) ON DELETE CASCADE,
  checked_seq  integer NOT NULL,
  from_epoch   integer NOT NULL,
  to_epoch     integer NOT NULL,
  moved_by     text NOT NULL,
  check_id     bigint REFERENCES rw_epoch_checks(id) ON DELETE SET NULL,
  moved_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, checked_seq, to_epoch)
);
