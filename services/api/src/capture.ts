import type { Json } from "@rewind/core";
import { CapturePolicyCache } from "@rewind/executor";
import type { Store } from "@rewind/store";

const caches = new WeakMap<Store, CapturePolicyCache>();

/**
 * A value redacted at the door, before it is stored anywhere (docs/capture-policy.md): a run's
 * input and a signal's payload. They reach a row (the run's first entry, the inbox's value)
 * before any worker sees them, so the script gets the marker too: a replay hands it the same,
 * and the run stays strictly replayable. Results, arguments and output are redacted where they
 * are committed, by the executor.
 */
export async function redactAtTheDoor(
  store: Store,
  namespace: string,
  toolset: string,
  value: Json,
): Promise<Json> {
  let cache = caches.get(store);
  if (cache === undefined) caches.set(store, (cache = new CapturePolicyCache(store)));
  const redactor = await cache.of(namespace, toolset);
  return redactor === undefined ? value : redactor.value(value).value;
}
