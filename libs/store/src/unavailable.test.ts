import { expect, it } from "vitest";
import { RewindError } from "@rewind/core";
import { databaseUnavailable } from "./unavailable.js";

/** How drizzle reports a driver's error: "Failed query: …" with the driver's error as cause. */
const failedQuery = (cause: Error) =>
  new Error('Failed query: select "namespace" from "rw_api_tokens"', { cause });
const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

it("names a stopped, restarting or unreachable database UNAVAILABLE, keeping the reason out of the message", () => {
  const cases = [
    failedQuery(withCode("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED")),
    failedQuery(Object.assign(new AggregateError([], ""), { code: "ECONNREFUSED" })),
    failedQuery(withCode("terminating connection due to administrator command", "57P01")),
    failedQuery(withCode("the database system is shutting down", "57P03")),
    failedQuery(withCode("connection failure", "08006")),
    failedQuery(new Error("Connection terminated unexpectedly")),
    withCode("read ECONNRESET", "ECONNRESET"),
  ];
  for (const error of cases) {
    const unavailable = databaseUnavailable(error);
    expect(
      unavailable,
      (error.cause instanceof Error ? error.cause : error).message,
    ).toBeInstanceOf(RewindError);
    expect(unavailable!.code).toBe("UNAVAILABLE");
    expect(unavailable!.message).toMatch(/database is unavailable.*retry/);
    expect(unavailable!.message).not.toContain("127.0.0.1");
  }
  expect(databaseUnavailable(cases[0])!.details.reason).toBe("connect ECONNREFUSED 127.0.0.1:5432");
});

it("leaves other failures alone: a query the database refused, a Rewind error, a non-error", () => {
  expect(databaseUnavailable(failedQuery(withCode("syntax error", "42601")))).toBeUndefined();
  expect(databaseUnavailable(withCode("duplicate key", "23505"))).toBeUndefined();
  expect(databaseUnavailable(new RewindError("NOT_FOUND", "no such run"))).toBeUndefined();
  expect(databaseUnavailable("ECONNREFUSED")).toBeUndefined();
});
