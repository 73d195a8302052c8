import { z } from "zod";
import { RewindError } from "./errors.js";

// Its own entry point (@rewind/core/service-config): zod stays out of what the replay engine
// bundles (the matching code's digest pins an epoch).

/**
 * What every service process (`rewind api`, `rewind worker`, `rewind quarantine-service`) reads
 * from its environment: the journal's Postgres, the doorbell's Redis, where large values live.
 */
export const serviceEnv = {
  DATABASE_URL: required(
    "DATABASE_URL is required: the Postgres holding the journal (run `rewind migrate` first)",
  ),
  REDIS_URL: required(
    "REDIS_URL is required: activations are queued on Redis (for one process, use `rewind dev`)",
  ),
  REWIND_REDIS_PREFIX: z.string().default("rewind"),
  REWIND_BLOB_URL: z.string().optional(),
  /** The payload codec's keys, `id:base64key,…` (docs/codec.md); checked when the store opens. */
  REWIND_CODEC_KEYS: z.string().default(""),
  REWIND_HOST: z.string().default("127.0.0.1"),
};

/** A variable that must be set and not empty; unset or empty, the same message says so. */
function required(message: string) {
  return z.string({ error: message }).min(1, message);
}

/**
 * REWIND_CHANGE_NOTICES: whether workers announce commits on Redis to waiting APIs (default on).
 * Off, clients waiting on a run learn of its commits on the API's poll only.
 */
export const changeNotices = z
  .enum(["on", "off"], { error: "REWIND_CHANGE_NOTICES must be on or off" })
  .default("on");

/** A duration setting in whole milliseconds, at least `min`. */
export const milliseconds = (name: string, min: number, fallback: number) =>
  z.coerce
    .number({ error: `${name} must be a number of milliseconds` })
    .int(`${name} must be a whole number of milliseconds`)
    .min(min, `${name} must be at least ${min} ms`)
    .default(fallback);

/** An optional port to listen on (0: any free one). */
export const port = (name: string) =>
  z.coerce
    .number({ error: `${name} must be a port number` })
    .int(`${name} must be a port number (0 to 65535)`)
    .min(0, `${name} must be a port number (0 to 65535)`)
    .max(65535, `${name} must be a port number (0 to 65535)`)
    .optional();

/** Parses a service's configuration, or fails fast saying every variable that is wrong. */
export function parseServiceConfig<T extends z.ZodType>(
  service: string,
  schema: T,
  env: NodeJS.ProcessEnv,
): z.output<T> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => issue.message);
  throw new RewindError(
    "INVALID_INPUT",
    `${service} cannot start, its configuration is incomplete:\n${problems.map((p) => `  - ${p}`).join("\n")}`,
  );
}
