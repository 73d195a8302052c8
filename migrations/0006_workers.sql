-- Rewind schema 6: the workers alive, and the epochs each can run.
--
-- Each worker (and `rewind dev`) writes its row when it starts and every few seconds after; a
-- graceful stop deletes it, and a killed worker's row simply stops being seen (rows unseen for a
-- day are deleted). The API counts the workers seen lately per epoch: open runs of an epoch no
-- live worker runs are waiting for one, which `rewind epochs` and the dashboard's Overview say.
CREATE TABLE rw_workers (
  owner       text PRIMARY KEY,
  epochs      integer[] NOT NULL,
  started_at  timestamptz NOT NULL DEFAULT now(),
  seen_at     timestamptz NOT NULL DEFAULT now()
);
