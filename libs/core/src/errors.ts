import type { ErrorData } from "./entries.js";

/**
 * Every error Rewind raises has a string code from this table. The table says, for each code,
 * whether retrying the same operation can help, what becomes of the run, and the HTTP status the
 * API answers with. Exhaustive by construction: adding a code without a row does not compile.
 */
export const ERROR_TABLE = {
  INVALID_INPUT: { retryable: false, runStatus: null, http: 422 },
  /** The HTTP request itself is malformed (a bad URL escape, a broken request line). */
  BAD_REQUEST: { retryable: false, runStatus: null, http: 400 },
  METHOD_NOT_ALLOWED: { retryable: false, runStatus: null, http: 405 },
  URI_TOO_LONG: { retryable: false, runStatus: null, http: 414 },
  HEADERS_TOO_LARGE: { retryable: false, runStatus: null, http: 431 },
  COMPILE_ERROR: { retryable: false, runStatus: null, http: 422 },
  NOT_FOUND: { retryable: false, runStatus: null, http: 404 },
  CONFLICT: { retryable: false, runStatus: null, http: 409 },
  UNAUTHORIZED: { retryable: false, runStatus: null, http: 401 },
  FORBIDDEN: { retryable: false, runStatus: null, http: 403 },
  PAYLOAD_TOO_LARGE: { retryable: false, runStatus: "failed", http: 413 },
  SCRIPT_ERROR: { retryable: false, runStatus: "failed", http: 422 },
  CPU_LIMIT: { retryable: false, runStatus: "failed", http: 422 },
  MEMORY_LIMIT: { retryable: false, runStatus: "failed", http: 422 },
  TOOL_NOT_FOUND: { retryable: false, runStatus: "failed", http: 422 },
  TOOL_TIMEOUT: { retryable: true, runStatus: null, http: 504 },
  TOOL_ERROR: { retryable: true, runStatus: null, http: 502 },
  UNSAFE_TO_REPEAT: { retryable: false, runStatus: "failed", http: 409 },
  CRASH_LOOP: { retryable: false, runStatus: "failed", http: 422 },
  DIVERGENCE: { retryable: false, runStatus: "quarantined", http: 409 },
  GIVEN_UP: { retryable: false, runStatus: "failed", http: 409 },
  LEASE_LOST: { retryable: true, runStatus: null, http: 409 },
  SANDBOX_ERROR: { retryable: false, runStatus: "failed", http: 500 },
  UNAVAILABLE: { retryable: true, runStatus: null, http: 503 },
  /** A limit of the namespace (libs/core/src/limits.ts): a start refused, or the run failed. */
  LIMIT_EXCEEDED: { retryable: false, runStatus: "failed", http: 429 },
} as const satisfies Record<
  string,
  { retryable: boolean; runStatus: "failed" | "quarantined" | null; http: number }
>;

export type ErrorCode = keyof typeof ERROR_TABLE;

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === "string" && Object.hasOwn(ERROR_TABLE, code);
}

/** The base of Rewind's errors: a code from the table, identity fields, and what to do next. */
export class RewindError extends Error {
  override readonly name: string = "RewindError";
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }

  get retryable(): boolean {
    return ERROR_TABLE[this.code].retryable;
  }

  /** The plain-data form that crosses the sandbox wall or is stored in the journal. */
  toData(): ErrorData {
    return { name: this.name, message: this.message, code: this.code };
  }
}

/** Turns anything thrown into plain error data, without ever keeping a host stack. */
export function toErrorData(error: unknown, fallbackCode: ErrorCode = "TOOL_ERROR"): ErrorData {
  if (error instanceof RewindError) return error.toData();
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return {
      name: error.name,
      message: error.message,
      code: typeof code === "string" ? code : fallbackCode,
    };
  }
  return { name: "Error", message: String(error), code: fallbackCode };
}
