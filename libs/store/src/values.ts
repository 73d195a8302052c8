import { RewindError, type Json } from "@rewind/core";
import type { BlobStore } from "./blobs.js";
import { openText, type PayloadCodec } from "./codec.js";
import { INLINE_VALUE_LIMIT, type EncodedValue } from "./encoding.js";
import type { SqlClient } from "./sql.js";

/**
 * A value as stored: its text inline (canonical JSON, or sealed by the payload codec), or the key
 * of the blob holding that text.
 */
export type ValueRow = { ref: string; body: string | null; blobKey: string | null; size: number };

/** What reads a run's values back: the rows stored apart, and the codec that opens sealed text. */
export interface ValueReader {
  /** Values of `namespace`'s runs (a sealed one opens only as that namespace's). */
  load(refs: readonly string[], namespace: string): Promise<Map<string, Json>>;
  readonly codec: PayloadCodec | undefined;
}

/**
 * Values stored apart from their entries (larger than an inline value), once each, by reference;
 * the largest in the blob store. A run keeps a row per value it uses, so retention knows which
 * values no run needs any more.
 */
export class ValueRows implements ValueReader {
  constructor(
    private readonly sql: SqlClient,
    private readonly blobs: BlobStore,
    readonly codec: PayloadCodec | undefined,
  ) {}

  /** Large values go to the blob store first: the row that refers to a blob commits after it. */
  async prepare(values: readonly EncodedValue[]): Promise<ValueRow[]> {
    const rows: ValueRow[] = [];
    for (const value of values) {
      if (value.size > INLINE_VALUE_LIMIT) {
        const key = value.ref.slice("sha256:".length);
        await this.blobs.put(key, value.canonical);
        rows.push({ ref: value.ref, body: null, blobKey: key, size: value.size });
      } else {
        rows.push({ ref: value.ref, body: value.canonical, blobKey: null, size: value.size });
      }
    }
    return rows;
  }

  async insert(
    tx: Pick<SqlClient, "query">,
    runId: string,
    values: readonly ValueRow[],
  ): Promise<void> {
    for (const v of values) {
      await tx.query(
        "INSERT INTO rw_values (ref, body, blob_key, size) VALUES ($1, $2, $3, $4) ON CONFLICT (ref) DO NOTHING",
        [v.ref, v.body, v.blobKey, v.size],
      );
      await tx.query(
        "INSERT INTO rw_run_values (run_id, ref) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        [runId, v.ref],
      );
    }
  }

  /** Each value's size as stored (bytes of its text), by ref; a ref not stored is absent. */
  async sizes(refs: readonly string[]): Promise<Map<string, number>> {
    if (refs.length === 0) return new Map();
    const rows = await this.sql.query<{ ref: string; size: number | string }>(
      "SELECT ref, size FROM rw_values WHERE ref = ANY($1)",
      [refs],
    );
    return new Map(rows.map((row) => [row.ref, Number(row.size)]));
  }

  async load(refs: readonly string[], namespace: string): Promise<Map<string, Json>> {
    const values = new Map<string, Json>();
    if (refs.length === 0) return values;
    const rows = await this.sql.query<{
      ref: string;
      body: string | null;
      blob_key: string | null;
    }>("SELECT ref, body, blob_key FROM rw_values WHERE ref = ANY($1)", [refs]);
    for (const row of rows) {
      const text = row.blob_key === null ? row.body! : await this.blobs.get(row.blob_key);
      values.set(row.ref, JSON.parse(openText(text, this.codec, namespace)) as Json);
    }
    for (const ref of refs) {
      if (!values.has(ref))
        throw new RewindError("SANDBOX_ERROR", `The value ${ref} is missing from the store`);
    }
    return values;
  }
}
