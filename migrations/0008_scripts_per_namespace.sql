-- Rewind schema 8: scripts belong to their namespace.
--
-- Scripts were stored once by the hash of their code, first writer wins: a tenant that uploaded
-- another tenant's compiled code first, with a broken source map, broke the other's runs; and a
-- tenant that knew another's hash could start a run from it and read its code and source map.
-- Now each namespace has its own copy, keyed (namespace, hash): one namespace's upload can never
-- change what another's run executes or shows, and a hash names a script only within the
-- namespace that stored it.
--
-- Existing scripts are copied into each namespace that has a run of them; a script no run uses
-- is dropped (sending it again stores it again).
ALTER TABLE rw_runs DROP CONSTRAINT rw_runs_script_hash_fkey;
ALTER TABLE rw_scripts DROP CONSTRAINT rw_scripts_pkey;
ALTER TABLE rw_scripts ADD COLUMN namespace text REFERENCES rw_namespaces(name);

INSERT INTO rw_scripts (namespace, hash, entry, code, source_map, created_at)
SELECT used.namespace, s.hash, s.entry, s.code, s.source_map, s.created_at
FROM (SELECT DISTINCT namespace, script_hash FROM rw_runs) used
JOIN rw_scripts s ON s.hash = used.script_hash AND s.namespace IS NULL;

DELETE FROM rw_scripts WHERE namespace IS NULL;
ALTER TABLE rw_scripts ALTER COLUMN namespace SET NOT NULL;
ALTER TABLE rw_scripts ADD PRIMARY KEY (namespace, hash);
ALTER TABLE rw_runs ADD CONSTRAINT rw_runs_script_fkey
  FOREIGN KEY (namespace, script_hash) REFERENCES rw_scripts(namespace, hash);
