import {
  canonicalize,
  orderEntry,
  valueRefOfCanonical,
  type Json,
  type JournalEntry,
} from "@rewind/core";

/** Values above this size live in the blob store, not in the database row. */
export const INLINE_VALUE_LIMIT = 64 * 1024;

/**
 * Values up to this size stay in their journal row, as canonical JSON text (`<field>Json`):
 * a tool call's arguments and result are usually small, and a separate value row (with its
 * hash, its index entries and its run link) would double the cost of every commit. Larger values
 * are stored once, by reference (`<field>Ref`: `sha256:` of the canonical JSON).
 */
export const IN_ENTRY_LIMIT = 2 * 1024;

/** The entry fields that hold values, by kind. */
const VALUE_FIELDS: Partial<Record<JournalEntry["kind"], string>> = {
  "run.started": "input",
  call: "args",
  "call.result": "result",
  signal: "payload",
  "run.completed": "result",
};

export interface EncodedValue {
  ref: string;
  canonical: string;
  size: number;
}

export interface EntryRow {
  seq: number;
  kind: string;
  at: number;
  callsite: string | null;
  body: Record<string, unknown>;
}

/**
 * An entry as a row: a small value inline as canonical text, a larger one replaced by its
 * reference (and returned beside the row, to be stored once).
 */
export function encodeEntry(entry: JournalEntry): {
  row: EntryRow;
  value?: EncodedValue;
  inline?: string;
} {
  const { seq, kind, at, callsite, ...rest } = entry as JournalEntry & Record<string, unknown>;
  const body: Record<string, unknown> = rest;
  delete body.kind;
  const field = VALUE_FIELDS[kind];
  const row = { seq, kind, at, callsite: callsite ?? null, body };
  if (field === undefined) return { row };
  const canonical = canonicalize(body[field]);
  delete body[field];
  if (canonical.length <= IN_ENTRY_LIMIT) {
    body[`${field}Json`] = canonical;
    return { row, inline: canonical };
  }
  const value = {
    ref: valueRefOfCanonical(canonical),
    canonical,
    size: Buffer.byteLength(canonical),
  };
  body[`${field}Ref`] = value.ref;
  return { row, value };
}

export function encodeValue(json: Json): EncodedValue {
  const canonical = canonicalize(json);
  return { ref: valueRefOfCanonical(canonical), canonical, size: Buffer.byteLength(canonical) };
}

/** The reference a row's body holds, if its value is stored apart. */
export function refOf(row: Pick<EntryRow, "kind" | "body">): string | undefined {
  const field = VALUE_FIELDS[row.kind as JournalEntry["kind"]];
  return field === undefined ? undefined : (row.body[`${field}Ref`] as string | undefined);
}

/** A row back to an entry, its value read inline or looked up by reference. */
export function decodeEntry(row: EntryRow, valueOf: (ref: string) => Json): JournalEntry {
  const body = { ...row.body };
  const field = VALUE_FIELDS[row.kind as JournalEntry["kind"]];
  if (field !== undefined) {
    const inline = body[`${field}Json`];
    const ref = body[`${field}Ref`];
    delete body[`${field}Json`];
    delete body[`${field}Ref`];
    body[field] =
      typeof inline === "string" ? (JSON.parse(inline) as Json) : valueOf(ref as string);
  }
  const entry = { ...body, seq: row.seq, kind: row.kind, at: Number(row.at) } as Record<
    string,
    unknown
  >;
  if (row.callsite !== null) entry.callsite = row.callsite;
  return orderEntry(entry as unknown as JournalEntry);
}
