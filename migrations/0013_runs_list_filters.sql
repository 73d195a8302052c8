-- Rewind schema 13: the runs list's filters (GET /v1/runs: status, script, toolset, epoch, time,
-- parent, text). Runs are listed by id, and run ids sort by creation time, so each index ends with
-- the id: a page is a range scan in order, whatever the filter, and `before`/`after` seek into it.
--
-- Only columns a run's row never changes after its start are indexed here, besides status (already
-- indexed by 0001): a lease taken or renewed updates none of them, so it stays a HOT update.
-- Toolset, epoch, time and text are checked along the (namespace, id) scan: cheap while they match
-- often, a longer read for a rare value in a large namespace (an index of its own, if one matters).
CREATE INDEX rw_runs_namespace_id ON rw_runs (namespace, id);
CREATE INDEX rw_runs_namespace_status_id ON rw_runs (namespace, status, id);
CREATE INDEX rw_runs_namespace_script_id ON rw_runs (namespace, script_hash, id);
CREATE INDEX rw_runs_parent_id ON rw_runs (parent_id, id) WHERE parent_id IS NOT NULL;
-- The script filter takes a file name: its hashes are found by (namespace, entry).
CREATE INDEX rw_scripts_namespace_entry ON rw_scripts (namespace, entry);
