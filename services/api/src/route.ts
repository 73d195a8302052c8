import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import type { TokenGrant } from "@rewind/store";
import { authorize, type Access } from "./auth.js";
import { fromZodError } from "./errors.js";
import type { ApiContext } from "./context.js";

/** A documented response of a route: its schema (JSON unless `contentType` says otherwise). */
export interface ResponseDoc {
  description: string;
  schema?: z.ZodType;
  contentType?: string;
  /** Further content types the same status may answer with (e.g. the journal as JSON Lines). */
  alternatives?: Record<string, { schema: z.ZodType }>;
  headers?: Record<string, string>;
}

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** The namespace the request's token grants (`public` routes get ""). */
  namespace: string;
  /** The request's token (`public` routes get none). */
  grant?: TokenGrant;
  request: FastifyRequest;
  reply: FastifyReply;
  /** Aborted when the client goes away or the API shuts down: long waits end early. */
  signal: AbortSignal;
}

/**
 * One endpoint: its input schemas, its documented responses and its handler. The same definition
 * is validated against at run time and rendered into the OpenAPI document.
 */
export interface Route<P = unknown, Q = unknown, B = unknown> {
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** Fastify's form: `/v1/runs/:id`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  /** The token scope the route needs, or `public`: the one place access is decided. */
  access: Access;
  params?: z.ZodType<P>;
  query?: z.ZodType<Q>;
  body?: z.ZodType<B>;
  /** Whether the body may be absent (an empty POST). */
  bodyOptional?: boolean;
  responses: Record<number, ResponseDoc>;
  /** Error statuses the route may answer with, documented with the error body. */
  errors: readonly number[];
  handle(input: RouteInput<P, Q, B>, ctx: ApiContext): Promise<unknown>;
}

/** Keeps a route's schema and handler types tied together, then forgets them for the table. */
export function defineRoute<P = undefined, Q = undefined, B = undefined>(
  route: Route<P, Q, B>,
): Route {
  return route;
}

export function registerRoute(app: FastifyInstance, route: Route, ctx: ApiContext): void {
  // A route that declares no access is never reachable, rather than open by omission.
  const access = (route as Partial<Route>).access;
  if (access === undefined)
    throw new Error(`Route ${route.method} ${route.path} declares no access (a scope or "public")`);
  const grants = new WeakMap<FastifyRequest, TokenGrant>();
  app.route({
    method: route.method,
    url: route.path,
    // Authorize before the body is read: an unknown client's upload is refused unread.
    onRequest: async (request) => {
      if (access !== "public") grants.set(request, await authorize(request, ctx.store, access));
    },
    handler: async (request, reply) => {
      const grant = grants.get(request);
      const namespace = grant?.namespace ?? "";
      const params = parse("params", route.params, request.params);
      const query = parse("query", route.query, request.query);
      const body = parse("body", route.body, request.body);
      // Only long-polls listen for the client leaving: the signal is made when first asked for.
      let signal: AbortSignal | undefined;
      const input = {
        params,
        query,
        body,
        namespace,
        ...(grant === undefined ? {} : { grant }),
        request,
        reply,
        get signal() {
          return (signal ??= ctx.shutdown.signalFor(reply));
        },
      };
      return route.handle(input, ctx);
    },
  });
}

function parse<T>(location: string, schema: z.ZodType<T> | undefined, value: unknown): T {
  if (schema === undefined) return undefined as T;
  const result = schema.safeParse(value);
  if (!result.success) throw fromZodError(location, result.error);
  return result.data;
}
