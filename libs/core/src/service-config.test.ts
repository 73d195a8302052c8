import { expect, it } from "vitest";
import { z } from "zod";
import { milliseconds, parseServiceConfig, port, serviceEnv } from "./service-config.js";

const Config = z.object({
  ...serviceEnv,
  REWIND_LEASE_MS: milliseconds("REWIND_LEASE_MS", 500, 10_000),
  REWIND_HEALTH_PORT: port("REWIND_HEALTH_PORT"),
});

it("reads a service's environment, with defaults", () => {
  expect(
    parseServiceConfig("rewind worker", Config, {
      DATABASE_URL: "postgres://db/rewind",
      REDIS_URL: "redis://r:6379",
      REWIND_HEALTH_PORT: "0",
    }),
  ).toEqual({
    DATABASE_URL: "postgres://db/rewind",
    REDIS_URL: "redis://r:6379",
    REWIND_REDIS_PREFIX: "rewind",
    REWIND_HOST: "127.0.0.1",
    REWIND_CODEC_KEYS: "", // no payload codec keys: no namespace's values can be sealed here
    REWIND_LEASE_MS: 10_000,
    REWIND_HEALTH_PORT: 0,
  });
});

it("fails fast naming every variable that is wrong and what to set", () => {
  expect(() =>
    parseServiceConfig("rewind worker", Config, {
      REDIS_URL: "redis://r:6379",
      REWIND_LEASE_MS: "100",
      REWIND_HEALTH_PORT: "http",
    }),
  ).toThrow(
    /rewind worker cannot start.*\n {2}- DATABASE_URL is required.*rewind migrate.*\n {2}- REWIND_LEASE_MS must be at least 500 ms\n {2}- REWIND_HEALTH_PORT must be a port number/s,
  );
});
