/**
 * Webhooks' requests and responses (/v1/webhooks, docs/webhooks.md) and the payload an endpoint
 * receives: Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature headers), a thin
 * JSON body with a link to the run.
 */
import { z } from "zod";

const isoDate = z.string().meta({ format: "date-time" });

/** The journal entries an endpoint can subscribe to: each is an event of that type. */
export const WEBHOOK_EVENT_TYPES = [
  "run.started",
  "run.completed",
  "run.failed",
  "run.cancelled",
  "run.quarantined",
  "run.released",
] as const;

export const WebhookEventType = z.enum(WEBHOOK_EVENT_TYPES, {
  error: `must be one of ${WEBHOOK_EVENT_TYPES.join(", ")}`,
});

/** What an endpoint receives, signed (docs/webhooks.md says how to verify it). */
export const WebhookPayload = z.object({
  type: WebhookEventType,
  timestamp: isoDate.meta({ description: "When the event's journal entry was committed" }),
  data: z.object({
    runId: z.string(),
    namespace: z.string(),
    status: z.string().meta({ description: "The run's status the event put it in" }),
    links: z.object({ run: z.string().meta({ description: "The run in the API" }) }),
  }),
});

export const WebhookEndpointView = z.object({
  id: z.string().meta({ description: "wh_ and 16 hex digits" }),
  url: z.string(),
  description: z.string(),
  events: z
    .array(WebhookEventType)
    .meta({ description: "The event types it receives; empty: every type" }),
  enabled: z.boolean(),
  disabledReason: z.string().nullable(),
  failingSince: isoDate.nullable().meta({
    description: "Since when every attempt failed; past the dispatcher's limit it is disabled",
  }),
  createdAt: isoDate,
  updatedAt: isoDate,
  previousSecretUntil: isoDate.nullable().meta({
    description: "Until then the secret before the last rotation signs too (two v1 signatures)",
  }),
});

export const WebhookEndpointList = z.object({ endpoints: z.array(WebhookEndpointView) });

export const WebhookSecret = z.object({
  secret: z.string().meta({ description: "whsec_ and base64: the signing secret" }),
});

export const CreatedWebhookEndpoint = WebhookEndpointView.extend(WebhookSecret.shape);

export const CreateWebhookBody = z.strictObject({
  url: z
    .string()
    .max(2000, { error: "must be at most 2000 characters" })
    .meta({
      description: "http(s) URL of the endpoint; not a private, loopback or link-local one",
    }),
  events: z
    .array(WebhookEventType)
    .max(WEBHOOK_EVENT_TYPES.length)
    .optional()
    .meta({ description: "Event types to receive (default: every type)" }),
  description: z
    .string()
    .max(500)
    .regex(/^[^\u0000-\u001f]*$/, { error: "description must have no control characters" })
    .optional(),
  enabled: z.boolean().optional().meta({ description: "Default true" }),
});

export const RotateWebhookBody = z.strictObject({
  keepPrevious: z
    .string()
    .regex(/^(\d+(ms|s|m|h|d))+$/, { error: 'keepPrevious must be a duration like "24h" or "0s"' })
    .optional()
    .meta({ description: 'How long the old secret signs too (default "24h"; at most 7d)' }),
});

export const WebhookIdParams = z.strictObject({
  id: z.string().regex(/^wh_[0-9a-f]{16}$/, {
    error: "id must be wh_ and 16 hex digits (rewind webhooks list)",
  }),
});

export const DeliveryIdParams = WebhookIdParams.extend({
  delivery: z.string().regex(/^[1-9][0-9]{0,17}$/, {
    error: "delivery must be a delivery's number (rewind webhooks deliveries <endpoint>)",
  }),
});

export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;

export const WebhookDeliveriesQuery = z.strictObject({
  limit: z.coerce
    .number({ error: "limit must be a number" })
    .int()
    .min(1)
    .max(500, { error: "limit must be at most 500" })
    .default(50),
  before: z
    .string()
    .regex(/^[1-9][0-9]{0,17}$/, { error: "before must be a delivery's number" })
    .optional()
    .meta({ description: "Deliveries older than this one (the next page)" }),
  status: z.enum(DELIVERY_STATUSES).optional(),
});

export const WebhookDeliveryView = z.object({
  id: z.string().meta({ description: "The delivery's number" }),
  eventId: z.string().meta({ description: "The webhook-id header: the same on every attempt" }),
  type: WebhookEventType,
  runId: z.string(),
  seq: z.number().int().meta({ description: "The journal entry of the event" }),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.number().int(),
  nextAttemptAt: isoDate.nullable(),
  lastAttemptAt: isoDate.nullable(),
  lastStatus: z.number().int().nullable().meta({ description: "HTTP status of the last answer" }),
  lastError: z.string().nullable(),
  deliveredAt: isoDate.nullable(),
  createdAt: isoDate,
});

export const WebhookDeliveryList = z.object({
  deliveries: z.array(WebhookDeliveryView),
  next: z.string().optional().meta({ description: "`before` for the next page, if any" }),
});

export const WebhookAttemptView = z.object({
  attempt: z.number().int(),
  at: isoDate,
  status: z.number().int().nullable(),
  error: z.string().nullable(),
  durationMs: z.number().int(),
  response: z.string().nullable().meta({ description: "The start of the answer's body" }),
});

export const WebhookDeliveryDetail = WebhookDeliveryView.extend({
  payload: z.string().meta({ description: "The body sent, byte for byte" }),
  log: z.array(WebhookAttemptView),
});

// ---- the TypeScript types of the wire
export type WebhookEventType = z.output<typeof WebhookEventType>;
export type WebhookPayload = z.output<typeof WebhookPayload>;
export type WebhookEndpointView = z.output<typeof WebhookEndpointView>;
export type WebhookEndpointList = z.output<typeof WebhookEndpointList>;
export type CreatedWebhookEndpoint = z.output<typeof CreatedWebhookEndpoint>;
export type CreateWebhook = z.input<typeof CreateWebhookBody>;
export type RotateWebhook = z.input<typeof RotateWebhookBody>;
export type WebhookDeliveriesQuery = z.input<typeof WebhookDeliveriesQuery>;
export type WebhookDeliveryView = z.output<typeof WebhookDeliveryView>;
export type WebhookDeliveryList = z.output<typeof WebhookDeliveryList>;
export type WebhookDeliveryDetail = z.output<typeof WebhookDeliveryDetail>;
