import { RewindError } from "@rewind/core";
import { CODEC_KEYS_ENV, type PayloadCodec } from "./codec.js";
import type { Seal } from "./encoding.js";
import type { SqlClient } from "./sql.js";

/** A namespace's payload codec setting, and what this process can do about it. */
export interface CodecSetting {
  enabled: boolean;
  /** The key this process seals new values with, or null when it holds no keys. */
  encryptingKeyId: string | null;
  /** Every key id this process can open values with (never the keys themselves). */
  keyIds: string[];
  updatedAt?: Date;
}

/**
 * How long a process trusts what it read of a namespace's setting: switching the codec on
 * reaches every process's new values within this time (docs/codec.md). Read once per namespace
 * per period, so the commit path with the codec off costs one map lookup.
 */
export const CODEC_SETTING_CACHE_MS = 5_000;

export class CodecSettings {
  private readonly known = new Map<string, { enabled: boolean; until: number }>();

  constructor(
    private readonly sql: SqlClient,
    private readonly codec: PayloadCodec | undefined,
  ) {}

  async get(namespace: string): Promise<CodecSetting> {
    const rows = await this.sql.query<{ enabled: boolean; updated_at: Date | string }>(
      "SELECT enabled, updated_at FROM rw_namespace_codec WHERE namespace = $1",
      [namespace],
    );
    const row = rows[0];
    const enabled = row?.enabled === true;
    this.remember(namespace, enabled);
    return {
      enabled,
      encryptingKeyId: this.codec?.encryptingKeyId ?? null,
      keyIds: this.codec?.keyIds ?? [],
      ...(row !== undefined ? { updatedAt: new Date(row.updated_at) } : {}),
    };
  }

  async set(namespace: string, enabled: boolean): Promise<CodecSetting> {
    // Switching it on where this process could not seal would leave every value it writes
    // refused: say so now, at the switch, not at the first run.
    if (enabled && this.codec === undefined)
      throw new RewindError(
        "CONFLICT",
        `The payload codec cannot be switched on: this process has no keys. Set ${CODEC_KEYS_ENV} ` +
          `(id:base64key, e.g. k1:$(openssl rand -base64 32)) on every API, worker and quarantine ` +
          `process first, then switch it on`,
        { namespace },
      );
    await this.sql.query(
      `INSERT INTO rw_namespace_codec (namespace, enabled) VALUES ($1, $2)
       ON CONFLICT (namespace) DO UPDATE SET enabled = EXCLUDED.enabled, updated_at = now()`,
      [namespace, enabled],
    );
    return this.get(namespace);
  }

  /**
   * How a namespace's values are sealed: undefined with the codec off. On, and this process
   * without keys, every write is refused rather than stored in the clear.
   */
  async sealFor(namespace: string): Promise<Seal> {
    const known = this.known.get(namespace);
    const enabled =
      known !== undefined && known.until > Date.now()
        ? known.enabled
        : (await this.get(namespace)).enabled;
    if (!enabled) return undefined;
    const codec = this.codec;
    if (codec === undefined)
      throw new RewindError(
        "UNAVAILABLE",
        `Namespace ${namespace} has the payload codec on, but this process has no keys to seal its ` +
          `values with: set ${CODEC_KEYS_ENV} on it (the same keys as the other processes)`,
        { namespace },
      );
    return (canonical) => codec.seal(canonical, namespace);
  }

  private remember(namespace: string, enabled: boolean): void {
    if (this.known.size >= 10_000) this.known.clear();
    this.known.set(namespace, { enabled, until: Date.now() + CODEC_SETTING_CACHE_MS });
  }
}
