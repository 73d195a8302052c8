import type { Socket } from "node:net";
import { STATUS_CODES } from "node:http";
import { RewindError, type ErrorCode } from "@rewind/core";
import type { FastifyInstance } from "fastify";
import type { ErrorBody } from "./errors.js";

/**
 * Requests refused before fastify routes them, answered in the API's own error shape
 * `{ error: { code, message } }`: Node's HTTP parser rejects them (headers too large, a broken
 * request line) and fastify would otherwise write its own `{ error, message, statusCode }`.
 */
export function clientErrorHandler(
  maxHeaderBytes: number,
): (error: Error & { code?: string }, socket: Socket) => void {
  return (error, socket) => {
    // A reset connection has nobody left to answer.
    if (error.code === "ECONNRESET" || socket.destroyed) return;
    const [status, code, message] = describe(error.code, maxHeaderBytes);
    const body = JSON.stringify({ error: { code, message } } satisfies ErrorBody);
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
          `Content-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(error);
  };
}

function describe(
  parserCode: string | undefined,
  maxHeaderBytes: number,
): [number, ErrorCode, string] {
  switch (parserCode) {
    case "HPE_HEADER_OVERFLOW":
      return [
        431,
        "HEADERS_TOO_LARGE",
        `The request's URL and headers together exceed the API's limit of ${maxHeaderBytes} bytes: send large data in a JSON body, not in the URL or headers`,
      ];
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return [
        408,
        "BAD_REQUEST",
        "The request was not received in time: send the whole request promptly, or check the network in between",
      ];
    default:
      return [
        400,
        "BAD_REQUEST",
        `The request is not valid HTTP/1.1 (${parserCode ?? "unparseable"}): check the client, or a proxy in between`,
      ];
  }
}

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;

/**
 * A known path asked with a method it does not have is 405 with an `Allow` header naming the ones
 * it has, not the 404 of a path that does not exist: the client has the URL right, the verb wrong.
 */
export function registerMethodNotAllowed(
  app: FastifyInstance,
  routes: readonly { method: string; path: string }[],
): void {
  const byPath = new Map<string, Set<string>>();
  for (const route of routes) {
    const methods = byPath.get(route.path) ?? new Set<string>();
    methods.add(route.method);
    // fastify answers HEAD for every GET route.
    if (route.method === "GET") methods.add("HEAD");
    byPath.set(route.path, methods);
  }
  for (const [path, methods] of byPath) {
    const allow = METHODS.filter((method) => methods.has(method));
    const missing = METHODS.filter((method) => !methods.has(method));
    app.route({
      method: missing,
      url: path,
      handler: async (request, reply) => {
        void reply.header("Allow", allow.join(", "));
        throw new RewindError(
          "METHOD_NOT_ALLOWED",
          `${path} does not take ${request.method}: use ${allow.join(" or ")} (the API's routes are listed in /v1/openapi.json)`,
        );
      },
    });
  }
}
