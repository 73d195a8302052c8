import { ERROR_TABLE, RewindError, type ErrorCode } from "@rewind/core";
import type { z } from "zod";
import { databaseUnavailable } from "@rewind/store";

/** The body of every error the API answers with. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; field?: string; problems?: unknown[] };
}

/** A rejected request: the field at fault (`body.script.code`, `query.wait`) and what to fix. */
export function invalidInput(field: string, message: string): RewindError {
  return new RewindError("INVALID_INPUT", `${field}: ${message}`, { field });
}

export function notFound(what: string): RewindError {
  return new RewindError("NOT_FOUND", what);
}

/**
 * Anything thrown while handling a request, as the status and body to answer with. Rewind errors
 * keep their code; an unreachable database is UNAVAILABLE (503, retry); fastify's own (body too
 * large, bad JSON, unknown media type) get one from the table; anything else is unexpected and
 * answered without its message or stack, which may hold internals.
 */
export function toHttpError(
  error: unknown,
  limits: { bodyLimit: number } = { bodyLimit: Number.NaN },
): {
  status: number;
  body: ErrorBody;
  expected: boolean;
} {
  if (error instanceof RewindError) {
    const field = error.details.field;
    const body: ErrorBody = { error: { code: error.code, message: error.message } };
    if (typeof field === "string") body.error.field = field;
    // A compile error says where, file by file (the message says it in words too).
    const problems = error.details.problems;
    if (error.code === "COMPILE_ERROR" && Array.isArray(problems)) body.error.problems = problems;
    return { status: ERROR_TABLE[error.code].http, body, expected: true };
  }
  // The database stopped or restarting: a 503 that says so and to retry; not a bug to log.
  const unavailable = databaseUnavailable(error);
  if (unavailable !== undefined) return fromCode(unavailable.code, unavailable.message);
  const fastifyCode = (error as { code?: unknown } | null)?.code;
  if (fastifyCode === "FST_ERR_CTP_BODY_TOO_LARGE") {
    // The limit is stated: a client that knows it can split or shrink what it sends.
    return fromCode(
      "PAYLOAD_TOO_LARGE",
      `The request body is larger than the API's limit of ${describeBytes(limits.bodyLimit)}: keep inputs and signal payloads small and pass large data by reference (a URL or an id a tool can fetch)`,
      "body",
    );
  }
  const known = typeof fastifyCode === "string" ? FASTIFY_ERRORS[fastifyCode] : undefined;
  if (known !== undefined) return fromCode(known[0], known[1], known[2]);
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === "number" && status >= 400 && status < 500) {
    // A request fastify refused for a reason not listed above: its message is about the request.
    return fromCode(
      "INVALID_INPUT",
      `${(error as Error).message}: check the request against /v1/openapi.json`,
    );
  }
  return {
    ...fromCode(
      "UNAVAILABLE",
      "The API could not complete the request (an internal error, logged on the server): retry; if it persists, check the server's log and that the database is reachable",
    ),
    expected: false,
  };
}

function fromCode(code: ErrorCode, message: string, field?: string) {
  const body: ErrorBody = { error: { code, message } };
  if (field !== undefined) body.error.field = field;
  return { status: ERROR_TABLE[code].http, body, expected: true };
}

/** Fastify's errors about the request itself, each with a code from the table and what to do. */
const FASTIFY_ERRORS: Record<string, [ErrorCode, string, string?]> = {
  FST_ERR_BAD_URL: [
    "BAD_REQUEST",
    "The request's URL is not valid (a broken %-escape): percent-encode each path segment (encodeURIComponent)",
    "url",
  ],
  FST_ERR_MAX_PARAM_LENGTH: [
    "URI_TOO_LONG",
    "A path parameter of the request's URL is longer than 256 characters: run ids and signal names are at most 200",
    "url",
  ],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [
    "INVALID_INPUT",
    "The request body is not JSON: send it with the header Content-Type: application/json",
    "body",
  ],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [
    "INVALID_INPUT",
    "The request body's length does not match its Content-Length header: send the body whole",
    "body",
  ],
};

/** "8 MiB (8388608 bytes)": a limit as a person reads it, and exactly. */
export function describeBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return "the configured size";
  const mib = bytes / (1024 * 1024);
  const kib = bytes / 1024;
  if (Number.isInteger(mib)) return `${mib} MiB (${bytes} bytes)`;
  if (Number.isInteger(kib)) return `${kib} KiB (${bytes} bytes)`;
  return `${bytes} bytes`;
}

/**
 * A zod failure as one INVALID_INPUT error naming the first offending field. For a union (the
 * script is code or a hash), the branch the request came closest to explains the problem.
 */
export function fromZodError(location: string, error: z.ZodError): RewindError {
  const issue = error.issues[0];
  if (issue === undefined) return invalidInput(location, "is invalid");
  return describeIssue(location, issue, "");
}

function describeIssue(location: string, issue: z.core.$ZodIssue, hint: string): RewindError {
  const field = [location, ...issue.path.map(String)].join(".");
  switch (issue.code) {
    case "invalid_union": {
      const branches = issue.errors.filter((branch) => branch.length > 0);
      const closest = branches.sort((a, b) => a.length - b.length)[0]?.[0];
      const unionHint = issue.message === "Invalid input" ? "" : issue.message;
      if (closest === undefined) return invalidInput(field, unionHint || "is invalid");
      const nested = { ...closest, path: [...issue.path, ...closest.path] } as z.core.$ZodIssue;
      return describeIssue(location, nested, unionHint);
    }
    case "unrecognized_keys": {
      const key = issue.keys[0] ?? "";
      return invalidInput(
        `${field}.${key}`,
        `is not a field of this request: check its spelling against /v1/openapi.json${withHint(hint)}`,
      );
    }
    case "invalid_type":
      if (issue.message.endsWith("received undefined")) {
        if (field === "body") {
          return invalidInput(
            field,
            "is missing: send a JSON object with Content-Type: application/json",
          );
        }
        return invalidInput(field, `is required (${issue.expected})${withHint(hint)}`);
      }
      return invalidInput(field, `${issue.message}${withHint(hint)}`);
    default:
      return invalidInput(field, `${issue.message}${withHint(hint)}`);
  }
}

function withHint(hint: string): string {
  return hint === "" ? "" : `; ${hint}`;
}
