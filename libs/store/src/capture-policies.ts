import type { SqlClient } from "./sql.js";

/**
 * What a capture policy holds (docs/capture-policy.md), as stored: validated at the door
 * (@rewind/contract's PutCapturePolicyBody) and compiled where entries are committed (the
 * executor's redactor). The store keeps it as given and knows nothing of what it means.
 */
export interface CaptureRules {
  fields: string[];
  detectors: string[];
  patterns: { name: string; regex: string; flags?: string }[];
}

export interface CapturePolicy extends CaptureRules {
  /** The toolset the policy is for, or null for every run of the namespace. */
  toolset: string | null;
  updatedAt?: Date;
}

/**
 * How long a process trusts what it read of a namespace's policies: a change reaches every
 * process's new entries within this time. Read once per namespace and toolset per period, so
 * a commit with no policy costs one map lookup.
 */
export const CAPTURE_POLICY_CACHE_MS = 5_000;

const NONE: CaptureRules = { fields: [], detectors: [], patterns: [] };

export class CapturePolicies {
  private readonly known = new Map<string, { rules: CaptureRules[]; until: number }>();

  constructor(private readonly sql: SqlClient) {}

  async get(namespace: string, toolset: string | null): Promise<CapturePolicy> {
    const rows = await this.sql.query<{ rules: CaptureRules | string; updated_at: Date | string }>(
      "SELECT rules, updated_at FROM rw_capture_policies WHERE namespace = $1 AND toolset = $2",
      [namespace, toolset ?? ""],
    );
    const row = rows[0];
    const rules = row === undefined ? NONE : parseRules(row.rules);
    return {
      toolset,
      ...rules,
      ...(row !== undefined ? { updatedAt: new Date(row.updated_at) } : {}),
    };
  }

  async set(
    namespace: string,
    toolset: string | null,
    rules: CaptureRules,
  ): Promise<CapturePolicy> {
    const stored: CaptureRules = {
      fields: [...rules.fields],
      detectors: [...rules.detectors],
      patterns: rules.patterns.map((p) => ({
        name: p.name,
        regex: p.regex,
        ...(p.flags ? { flags: p.flags } : {}),
      })),
    };
    await this.sql.query(
      `INSERT INTO rw_capture_policies (namespace, toolset, rules) VALUES ($1, $2, $3::jsonb)
       ON CONFLICT (namespace, toolset) DO UPDATE SET rules = EXCLUDED.rules, updated_at = now()`,
      [namespace, toolset ?? "", JSON.stringify(stored)],
    );
    // What this process applies to the namespace's runs is read again at their next commit.
    for (const k of this.known.keys()) if (k.startsWith(`${namespace}\u0000`)) this.known.delete(k);
    return this.get(namespace, toolset);
  }

  /**
   * The rules that apply to a run of `toolset` in `namespace`: the namespace-wide policy and the
   * toolset's own (empty ones left out), cached for CAPTURE_POLICY_CACHE_MS.
   */
  async applying(namespace: string, toolset: string): Promise<CaptureRules[]> {
    const k = key(namespace, toolset);
    const known = this.known.get(k);
    if (known !== undefined && known.until > Date.now()) return known.rules;
    const rows = await this.sql.query<{ rules: CaptureRules | string }>(
      "SELECT rules FROM rw_capture_policies WHERE namespace = $1 AND toolset IN ('', $2) ORDER BY toolset",
      [namespace, toolset],
    );
    const rules = rows.map((row) => parseRules(row.rules)).filter((r) => !isEmpty(r));
    if (this.known.size >= 10_000) this.known.clear();
    this.known.set(k, { rules, until: Date.now() + CAPTURE_POLICY_CACHE_MS });
    return rules;
  }
}

function key(namespace: string, toolset: string): string {
  return `${namespace}\u0000${toolset}`;
}

function isEmpty(rules: CaptureRules): boolean {
  return rules.fields.length + rules.detectors.length + rules.patterns.length === 0;
}

function parseRules(value: CaptureRules | string): CaptureRules {
  const rules = (typeof value === "string" ? JSON.parse(value) : value) as Partial<CaptureRules>;
  return {
    fields: rules.fields ?? [],
    detectors: rules.detectors ?? [],
    patterns: rules.patterns ?? [],
  };
}
