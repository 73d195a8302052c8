-- Rewind schema 14: webhooks (docs/webhooks.md). Endpoints a namespace subscribes, and one
-- delivery row per (endpoint, event), written by the projector's webhook sink in the same
-- transaction as its cursor's advance: an event is turned into deliveries exactly once, and a
-- delivery row is the durable timer of its retries (next_attempt_at), so a restart loses none.

CREATE TABLE rw_webhook_endpoints (
  id                    text PRIMARY KEY,
  namespace             text NOT NULL,
  url                   text NOT NULL,
  description           text NOT NULL DEFAULT '',
  -- The event types it receives; empty: every type.
  event_types           text[] NOT NULL DEFAULT '{}',
  -- whsec_ and base64: the signing key. Kept in the clear: signing needs it (as Svix and Stripe).
  secret                text NOT NULL,
  -- After a rotation the old secret signs too, until previous_secret_until (two v1 signatures).
  previous_secret       text,
  previous_secret_until timestamptz,
  enabled               boolean NOT NULL DEFAULT true,
  -- Why it was disabled (an operator, or failing for longer than the dispatcher allows).
  disabled_reason       text,
  -- Since when every attempt to it failed (NULL: its last attempt succeeded).
  failing_since         timestamptz,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX rw_webhook_endpoints_namespace ON rw_webhook_endpoints (namespace, id);

CREATE TABLE rw_webhook_deliveries (
  id              bigserial PRIMARY KEY,
  endpoint_id     text NOT NULL REFERENCES rw_webhook_endpoints (id) ON DELETE CASCADE,
  -- The webhook-id header: derived from the event (run and seq), the same on every attempt.
  event_id        text NOT NULL,
  event_type      text NOT NULL,
  run_id          text NOT NULL,
  seq             integer NOT NULL,
  -- The payload, made once: every attempt sends the same bytes.
  body            text NOT NULL,
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  -- Attempts made (claimed) in all; retry_from: the count when the current schedule began (a
  -- redelivery starts a new one), so backoff and the give-up count from there.
  attempts        integer NOT NULL DEFAULT 0,
  retry_from      integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  last_attempt_at timestamptz,
  last_status     integer,
  last_error      text,
  delivered_at    timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (endpoint_id, event_id)
);
CREATE INDEX rw_webhook_deliveries_due ON rw_webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX rw_webhook_deliveries_endpoint ON rw_webhook_deliveries (endpoint_id, id);

-- The delivery log: one row per attempt that came back (an answer or an error).
CREATE TABLE rw_webhook_attempts (
  delivery_id  bigint NOT NULL REFERENCES rw_webhook_deliveries (id) ON DELETE CASCADE,
  attempt      integer NOT NULL,
  at           timestamptz NOT NULL DEFAULT now(),
  status       integer,
  error        text,
  duration_ms  integer NOT NULL,
  -- The start of the response body (bounded), for the operator reading the log.
  response     text,
  PRIMARY KEY (delivery_id, attempt)
);
