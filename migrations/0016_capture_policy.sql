-- Rewind schema 16: capture policies, per namespace and toolset (docs/capture-policy.md).
--
-- A policy names the fields (JSON paths) and patterns (built-in detectors, operators' regexes) of
-- tool arguments and results, signals, inputs, outputs and run results that are replaced by a
-- marker before they reach the journal. toolset '' is the namespace-wide policy; a run's entries
-- are redacted by the namespace-wide one and its toolset's own, together. A change applies to new
-- entries only: recorded entries are never rewritten.
CREATE TABLE rw_capture_policies (
  namespace   text NOT NULL REFERENCES rw_namespaces(name) ON DELETE CASCADE,
  toolset     text NOT NULL DEFAULT '',
  rules       jsonb NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, toolset)
);
