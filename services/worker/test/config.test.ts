/**
 * The worker's own settings are checked before it connects to anything: a wrong value stops it at
 * once, naming the variable and what it takes.
 */
import { expect, it } from "vitest";
import { startWorker } from "../src/main.js";

const env = { DATABASE_URL: "postgres://db/rewind", REDIS_URL: "redis://r:6379" };

it("refuses a sandbox nice increment outside 0 to 19, or not whole, naming the variable", async () => {
  for (const [value, message] of [
    ["20", /REWIND_SANDBOX_NICE must be at most 19 \(the lowest priority\)/],
    ["-1", /REWIND_SANDBOX_NICE must be at least 0 \(the worker's own priority\)/],
    ["2.5", /REWIND_SANDBOX_NICE must be a whole number from 0 to 19/],
    ["low", /REWIND_SANDBOX_NICE must be a whole number from 0 to 19/],
  ] as const)
    await expect(
      startWorker({ toolsets: [], env: { ...env, REWIND_SANDBOX_NICE: value } }),
    ).rejects.toThrow(message);
});
