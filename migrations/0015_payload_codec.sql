-- Rewind schema 15: the payload codec, per namespace (docs/codec.md).
--
-- A namespace with the codec on has its values (inputs, tool arguments and results, signals,
-- results, console output) sealed with AES-256-GCM before they are stored: the keys live in the
-- environment of the processes (REWIND_CODEC_KEYS), never in the database. A sealed value's text
-- says which key sealed it, so no other column changes: a row holds canonical JSON or `rwc1:…`.
-- No row: the codec is off.
CREATE TABLE rw_namespace_codec (
  namespace   text PRIMARY KEY REFERENCES rw_namespaces(name) ON DELETE CASCADE,
  enabled     boolean NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);
