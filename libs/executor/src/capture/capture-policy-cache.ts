import type { CaptureRules, Store } from "@rewind/store";
import { Redactor } from "./redactor.js";

/**
 * The redactor each run commits under: its namespace's and toolset's capture rules, as the
 * store last read them (cached CAPTURE_POLICY_CACHE_MS there), compiled once per distinct set of
 * rules. Asked at every commit, so a change reaches new entries within the store's cache time;
 * entries already committed are never rewritten.
 */
export class CapturePolicyCache {
  private readonly compiled = new Map<string, Redactor | undefined>();

  constructor(private readonly store: Pick<Store, "captureRules">) {}

  async of(namespace: string, toolset: string): Promise<Redactor | undefined> {
    const rules = await this.store.captureRules(namespace, toolset);
    if (rules.length === 0) return undefined;
    return this.compile(rules);
  }

  private compile(rules: readonly CaptureRules[]): Redactor | undefined {
    const key = JSON.stringify(rules);
    if (this.compiled.has(key)) return this.compiled.get(key);
    const redactor = Redactor.of(rules);
    if (this.compiled.size >= 1_000) this.compiled.clear();
    this.compiled.set(key, redactor);
    return redactor;
  }
}
