import {
  CreateWebhookBody,
  CreatedWebhookEndpoint,
  DeliveryIdParams,
  RotateWebhookBody,
  WebhookDeliveriesQuery,
  WebhookDeliveryDetail,
  WebhookDeliveryList,
  WebhookDeliveryView,
  WebhookEndpointList,
  WebhookEndpointView,
  WebhookIdParams,
  WebhookSecret,
  type WebhookEventType,
} from "@rewind/contract";
import { RewindError, parseDuration } from "@rewind/core";
import { checkOutboundUrl } from "@rewind/core/outbound-address";
import type { WebhookDelivery, WebhookEndpoint } from "@rewind/store";
import type { z } from "zod";
import type { ApiContext } from "../context.js";
import { invalidInput, notFound } from "../errors.js";
import { defineRoute } from "../route.js";

/*
 * A namespace's webhook endpoints (docs/webhooks.md): operators manage them (`operate`), readers
 * see them and their delivery log (`read`) but never a secret. The projector makes and sends the
 * deliveries; these routes only store subscriptions and ask for a redelivery.
 */

const MAX_KEEP_PREVIOUS_MS = 7 * 86_400_000;

function endpointView(e: WebhookEndpoint): z.input<typeof WebhookEndpointView> {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    events: e.eventTypes as WebhookEventType[],
    enabled: e.enabled,
    disabledReason: e.disabledReason,
    failingSince: e.failingSince?.toISOString() ?? null,
    createdAt: e.createdAt.toISOString(),
    updatedAt: e.updatedAt.toISOString(),
    previousSecretUntil:
      e.previousSecretUntil !== null && e.previousSecretUntil.getTime() > Date.now()
        ? e.previousSecretUntil.toISOString()
        : null,
  };
}

function deliveryView(d: WebhookDelivery): z.input<typeof WebhookDeliveryView> {
  return {
    id: d.id,
    eventId: d.eventId,
    type: d.eventType as WebhookEventType,
    runId: d.runId,
    seq: d.seq,
    status: d.status,
    attempts: d.attempts,
    nextAttemptAt: d.nextAttemptAt?.toISOString() ?? null,
    lastAttemptAt: d.lastAttemptAt?.toISOString() ?? null,
    lastStatus: d.lastStatus,
    lastError: d.lastError,
    deliveredAt: d.deliveredAt?.toISOString() ?? null,
    createdAt: d.createdAt.toISOString(),
  };
}

async function endpointOf(ctx: ApiContext, namespace: string, id: string) {
  const endpoint = await ctx.store.webhooks.getEndpoint(namespace, id);
  if (endpoint === undefined)
    throw notFound(`No webhook endpoint ${id} in namespace ${namespace}: rewind webhooks list`);
  return endpoint;
}

export const createWebhook = defineRoute({
  method: "POST",
  path: "/v1/webhooks",
  operationId: "createWebhook",
  summary: "Subscribe an endpoint to the namespace's run events; the answer holds its secret",
  description:
    "The URL's host is resolved and every address checked: loopback, link-local, private and unspecified addresses are refused unless the operator allows them (REWIND_WEBHOOK_ALLOW).",
  access: "operate",
  body: CreateWebhookBody,
  responses: {
    201: { description: "The endpoint, with its secret", schema: CreatedWebhookEndpoint },
  },
  errors: [401, 403, 413, 422, 503],
  async handle({ body, namespace, reply }, ctx) {
    await checkOutboundUrl(body.url, ctx.webhookAddresses);
    const events = [...new Set(body.events ?? [])];
    const endpoint = await ctx.store.webhooks.createEndpoint(namespace, {
      url: body.url,
      description: body.description ?? "",
      eventTypes: events,
      enabled: body.enabled ?? true,
    });
    void reply.code(201);
    return {
      ...endpointView(endpoint),
      secret: endpoint.secret,
    } satisfies z.input<typeof CreatedWebhookEndpoint>;
  },
});

export const listWebhooks = defineRoute({
  method: "GET",
  path: "/v1/webhooks",
  operationId: "listWebhooks",
  summary: "The namespace's webhook endpoints, oldest first (never their secrets)",
  access: "read",
  responses: { 200: { description: "The endpoints", schema: WebhookEndpointList } },
  errors: [401, 403, 503],
  async handle({ namespace }, ctx) {
    const endpoints = await ctx.store.webhooks.listEndpoints(namespace);
    return { endpoints: endpoints.map(endpointView) } satisfies z.input<typeof WebhookEndpointList>;
  },
});

export const getWebhook = defineRoute({
  method: "GET",
  path: "/v1/webhooks/:id",
  operationId: "getWebhook",
  summary: "One webhook endpoint",
  access: "read",
  params: WebhookIdParams,
  responses: { 200: { description: "The endpoint", schema: WebhookEndpointView } },
  errors: [401, 403, 404, 422, 503],
  async handle({ params, namespace }, ctx) {
    return endpointView(await endpointOf(ctx, namespace, params.id));
  },
});

export const getWebhookSecret = defineRoute({
  method: "GET",
  path: "/v1/webhooks/:id/secret",
  operationId: "getWebhookSecret",
  summary: "A webhook endpoint's current signing secret",
  access: "operate",
  params: WebhookIdParams,
  responses: { 200: { description: "The secret", schema: WebhookSecret } },
  errors: [401, 403, 404, 422, 503],
  async handle({ params, namespace }, ctx) {
    return { secret: (await endpointOf(ctx, namespace, params.id)).secret };
  },
});

export const deleteWebhook = defineRoute({
  method: "DELETE",
  path: "/v1/webhooks/:id",
  operationId: "deleteWebhook",
  summary: "Remove a webhook endpoint and its delivery log (pending deliveries are not sent)",
  access: "operate",
  params: WebhookIdParams,
  responses: { 200: { description: "The endpoint as it was", schema: WebhookEndpointView } },
  errors: [401, 403, 404, 422, 503],
  async handle({ params, namespace }, ctx) {
    const endpoint = await endpointOf(ctx, namespace, params.id);
    if (!(await ctx.store.webhooks.deleteEndpoint(namespace, params.id)))
      throw notFound(`No webhook endpoint ${params.id} in namespace ${namespace}`);
    return endpointView(endpoint);
  },
});

export const rotateWebhookSecret = defineRoute({
  method: "POST",
  path: "/v1/webhooks/:id/rotate",
  operationId: "rotateWebhookSecret",
  summary: "A new signing secret; the old one keeps signing for a while (two v1 signatures)",
  access: "operate",
  params: WebhookIdParams,
  body: RotateWebhookBody,
  bodyOptional: true,
  responses: {
    200: { description: "The endpoint, with its new secret", schema: CreatedWebhookEndpoint },
  },
  errors: [401, 403, 404, 422, 503],
  async handle({ params, body, namespace }, ctx) {
    const keepMs = parseDuration(body?.keepPrevious ?? "24h", "keepPrevious");
    if (keepMs > MAX_KEEP_PREVIOUS_MS)
      throw invalidInput(
        "keepPrevious",
        "must be at most 7d: receivers should move to the new secret",
      );
    const endpoint = await ctx.store.webhooks.rotateSecret(namespace, params.id, keepMs);
    if (endpoint === undefined)
      throw notFound(
        `No webhook endpoint ${params.id} in namespace ${namespace}: rewind webhooks list`,
      );
    return { ...endpointView(endpoint), secret: endpoint.secret };
  },
});

const toggle = (enabled: boolean) =>
  defineRoute({
    method: "POST",
    path: `/v1/webhooks/:id/${enabled ? "enable" : "disable"}`,
    operationId: enabled ? "enableWebhook" : "disableWebhook",
    summary: enabled
      ? "Enable an endpoint (its failures forgotten); pending deliveries go out again"
      : "Disable an endpoint: nothing is sent to it, events still make deliveries only while enabled",
    access: "operate",
    params: WebhookIdParams,
    bodyOptional: true,
    responses: { 200: { description: "The endpoint", schema: WebhookEndpointView } },
    errors: [401, 403, 404, 422, 503],
    async handle({ params, namespace, grant }, ctx) {
      const endpoint = await ctx.store.webhooks.setEnabled(
        namespace,
        params.id,
        enabled,
        `disabled by ${grant!.label}`,
      );
      if (endpoint === undefined)
        throw notFound(
          `No webhook endpoint ${params.id} in namespace ${namespace}: rewind webhooks list`,
        );
      return endpointView(endpoint);
    },
  });
export const enableWebhook = toggle(true);
export const disableWebhook = toggle(false);

export const listWebhookDeliveries = defineRoute({
  method: "GET",
  path: "/v1/webhooks/:id/deliveries",
  operationId: "listWebhookDeliveries",
  summary: "An endpoint's delivery log, newest first",
  access: "read",
  params: WebhookIdParams,
  query: WebhookDeliveriesQuery,
  responses: { 200: { description: "A page of deliveries", schema: WebhookDeliveryList } },
  errors: [401, 403, 404, 422, 503],
  async handle({ params, query, namespace }, ctx) {
    await endpointOf(ctx, namespace, params.id);
    const deliveries = await ctx.store.webhooks.listDeliveries(params.id, {
      limit: query.limit,
      ...(query.before !== undefined ? { before: query.before } : {}),
      ...(query.status !== undefined ? { status: query.status } : {}),
    });
    return {
      deliveries: deliveries.map(deliveryView),
      ...(deliveries.length === query.limit ? { next: deliveries.at(-1)!.id } : {}),
    } satisfies z.input<typeof WebhookDeliveryList>;
  },
});

export const getWebhookDelivery = defineRoute({
  method: "GET",
  path: "/v1/webhooks/:id/deliveries/:delivery",
  operationId: "getWebhookDelivery",
  summary: "One delivery: the payload sent and every attempt's answer",
  access: "read",
  params: DeliveryIdParams,
  responses: { 200: { description: "The delivery", schema: WebhookDeliveryDetail } },
  errors: [401, 403, 404, 422, 503],
  async handle({ params, namespace }, ctx) {
    await endpointOf(ctx, namespace, params.id);
    const found = await ctx.store.webhooks.getDelivery(params.id, params.delivery);
    if (found === undefined)
      throw notFound(
        `No delivery ${params.delivery} of endpoint ${params.id}: rewind webhooks deliveries ${params.id}`,
      );
    return {
      ...deliveryView(found.delivery),
      payload: found.body,
      log: found.attempts.map((a) => ({ ...a, at: a.at.toISOString() })),
    } satisfies z.input<typeof WebhookDeliveryDetail>;
  },
});

export const redeliverWebhook = defineRoute({
  method: "POST",
  path: "/v1/webhooks/:id/deliveries/:delivery/redeliver",
  operationId: "redeliverWebhook",
  summary: "Send a delivery again (same webhook-id and body), with a new retry schedule",
  access: "operate",
  params: DeliveryIdParams,
  bodyOptional: true,
  responses: { 200: { description: "The delivery, pending", schema: WebhookDeliveryView } },
  errors: [401, 403, 404, 409, 422, 503],
  async handle({ params, namespace }, ctx) {
    const endpoint = await endpointOf(ctx, namespace, params.id);
    if (!endpoint.enabled)
      throw new RewindError(
        "CONFLICT",
        `Endpoint ${params.id} is disabled (${endpoint.disabledReason ?? "no reason"}): enable it first (rewind webhooks enable ${params.id})`,
      );
    const delivery = await ctx.store.webhooks.redeliver(params.id, params.delivery);
    if (delivery === undefined)
      throw notFound(
        `No delivery ${params.delivery} of endpoint ${params.id}: rewind webhooks deliveries ${params.id}`,
      );
    return deliveryView(delivery);
  },
});

export const WEBHOOK_ROUTES = [
  createWebhook,
  listWebhooks,
  getWebhook,
  getWebhookSecret,
  deleteWebhook,
  rotateWebhookSecret,
  enableWebhook,
  disableWebhook,
  listWebhookDeliveries,
  getWebhookDelivery,
  redeliverWebhook,
];
