-- Rewind schema 2: the toolsets workers run, as they describe them. Applied by `rewind migrate`.
--
-- A toolset's code lives in the workers (`rewind worker --toolset FILE`); the API never loads it.
-- But the API's fork preview must know which tools are marked unsafeToRepeat, to say before a
-- fork starts that it would fail with UNSAFE_TO_REPEAT. So each worker (and `rewind dev`)
-- publishes a description of its toolsets at start-up: tool names and their options, no code.
-- Workers of one deployment load the same toolset files, so one row per name, the latest
-- publication winning: during a rolling deploy the description converges on the new workers'.

CREATE TABLE rw_toolsets (
  name          text PRIMARY KEY,
  -- [{ "name": "sendEmail", "unsafeToRepeat": true, "timeoutMs": 30000, "retries": 3 }, …]
  tools         jsonb NOT NULL,
  published_by  text NOT NULL,
  published_at  timestamptz NOT NULL DEFAULT now()
);
