import { effectiveLimits, limitExceeded, type Limits } from "@rewind/core";
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
 * Refuses a start (or a fork) beyond the namespace's runs in flight or starts per second, with
 * 429 naming the limit. Counted from the rows, so every API process sees the same figures; two
 * starts at the same instant may both pass at the edge (a limit, not a lock).
 */
export async function checkStartLimits(ctx: ApiContext, namespace: string): Promise<void> {
  const [limits, load] = await Promise.all([
    limitsOf(ctx, namespace),
    ctx.store.startLoad(namespace),
  ]);
  if (load.inFlight >= limits.runsInFlight) {
    metrics.limitsExceeded.inc({ limit: "runsInFlight" });
    throw limitExceeded(
      "runsInFlight",
      limits.runsInFlight,
      namespace,
      `${load.inFlight} are open: start again once some have ended (or cancel some)`,
    );
  }
  if (load.lastSecond >= limits.startsPerSecond) {
    metrics.limitsExceeded.inc({ limit: "startsPerSecond" });
    throw limitExceeded(
      "startsPerSecond",
      limits.startsPerSecond,
      namespace,
      `${load.lastSecond} started in the last second: retry after a second (Retry-After)`,
    );
  }
}
