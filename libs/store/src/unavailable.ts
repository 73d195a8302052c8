import { RewindError } from "@rewind/core";

/**
 * Errors that say the database is not there right now (stopped, restarting, unreachable, out of
 * connections), as opposed to a query the database refused. Socket errors from Node, SQLSTATE
 * class 08 (connection exception), 57P01-57P03 (shut down by an administrator, crashed, not
 * accepting connections yet) and 53300 (too many connections).
 */
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "57P01",
  "57P02",
  "57P03",
  "53300",
]);
/** node-postgres's own messages for a connection that went away (they carry no code). */
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|encountered a connection error/i;

/**
 * The store's failure as an UNAVAILABLE error (HTTP 503, retryable) when the database itself is
 * unreachable, or undefined for any other failure. Drizzle wraps the driver's error ("Failed
 * query: …") in `cause`, so the chain is followed a few levels down.
 */
export function databaseUnavailable(error: unknown): RewindError | undefined {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    if (current instanceof RewindError) return undefined;
    const code = (current as { code?: unknown }).code;
    const byCode =
      typeof code === "string" && (UNAVAILABLE_CODES.has(code) || code.startsWith("08"));
    if (byCode || UNAVAILABLE_MESSAGES.test(current.message)) {
      // A connection refused on several addresses is an AggregateError with no message.
      const reason = current.message || (typeof code === "string" ? code : "no answer");
      // The message may reach API clients: the reason (host, port) stays in the details.
      return new RewindError(
        "UNAVAILABLE",
        "The database is unavailable (stopped, restarting or unreachable): retry in a few seconds; if it lasts, check that Postgres is up and that DATABASE_URL points at it",
        { reason },
      );
    }
    current = current.cause;
  }
  return undefined;
}
