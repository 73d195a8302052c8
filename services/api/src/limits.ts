import { effectiveLimits, limitExceeded, type Limits, type RewindError } from "@rewind/core";
import type { StartLimits, StartLoad } from "@rewind/store";
import { metrics } from "@rewind/telemetry";
import type { ApiContext } from "./context.js";

/** How long the API keeps a namespace's own limits before reading them again. */
const LIMITS_CACHE_MS = 5_000;
const cache = new WeakMap<ApiContext, Map<string, { limits: Limits; until: number }>>();

/** The limits a namespace runs under: its own, over this API's defaults. */
export async function limitsOf(ctx: ApiContext, namespace: string): Promise<Limits> {
  let known = cache.get(ctx);
  if (known === undefined) cache.set(ctx, (known = new Map()));
  const hit = known.get(namespace);
  if (hit !== undefined && hit.until > Date.now()) return hit.limits;
  const limits = effectiveLimits(ctx.limits, await ctx.store.getLimits(namespace));
  if (known.size >= 1000) known.clear();
  known.set(namespace, { limits, until: Date.now() + LIMITS_CACHE_MS });
  return limits;
}

/** A namespace's limits were set here: the next start reads them afresh. */
export function forgetLimits(ctx: ApiContext, namespace: string): void {
  cache.get(ctx)?.delete(namespace);
}

/**
 * The limits a start (or a fork) is held to: the store counts the namespace's load in the same
 * round trip as the insert, and refuses it over them. Counted from the rows, so every API process
 * sees the same figures; two starts at the same instant may both pass at the edge (a limit, not a
 * lock).
 */
export async function startLimits(ctx: ApiContext, namespace: string): Promise<StartLimits> {
  const { runsInFlight, startsPerSecond } = await limitsOf(ctx, namespace);
  return { runsInFlight, startsPerSecond };
}

/** The 429 for a start the store refused, naming the limit it reached and the load it counted. */
export function startRefused(limits: StartLimits, load: StartLoad, namespace: string): RewindError {
  if (load.inFlight >= limits.runsInFlight) {
    metrics.limitsExceeded.inc({ limit: "runsInFlight" });
    return limitExceeded(
      "runsInFlight",
      limits.runsInFlight,
      namespace,
      `${load.inFlight} are open: start again once some have ended (or cancel some)`,
    );
  }
  metrics.limitsExceeded.inc({ limit: "startsPerSecond" });
  return limitExceeded(
    "startsPerSecond",
    limits.startsPerSecond,
    namespace,
    `${load.lastSecond} started in the last second: retry after a second (Retry-After)`,
  );
}
