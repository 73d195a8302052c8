import {
  canonicalize,
  orderEntry,
  valueRefOfCanonical,
  type Json,
  type JournalEntry,
} from "@rewind/core";

/** Values above this size live in the blob store, not in the database row. */
export const INLINE_VALUE_LIMIT = 64 * 1024;

/** The entry fields that hold values, by kind: stored as `sha256:` references. */
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

/** An entry as a row: its value (if any) replaced by a reference, the value returned beside it. */
export function encodeEntry(entry: JournalEntry): { row: EntryRow; value?: EncodedValue } {
  const { seq, kind, at, callsite, ...rest } = entry as JournalEntry & Record<string, unknown>;
  const body: Record<string, unknown> = rest;
  delete body.kind;
  const field = VALUE_FIELDS[kind];
  let value: EncodedValue | undefined;
  if (field !== undefined) {
    value = encodeValue(body[field] as Json);
    body[field] = value.ref;
  }
  return { row: { seq, kind, at, callsite: callsite ?? null, body }, ...(value ? { value } : {}) };
}

export function encodeValue(json: Json): EncodedValue {
  const canonical = canonicalize(json);
  return { ref: valueRefOfCanonical(canonical), canonical, size: Buffer.byteLength(canonical) };
}

/** The reference a row's body holds, if its kind has a value. */
export function refOf(row: Pick<EntryRow, "kind" | "body">): string | undefined {
  const field = VALUE_FIELDS[row.kind as JournalEntry["kind"]];
  return field === undefined ? undefined : (row.body[field] as string);
}

/** A row back to an entry, its value looked up by reference. Keys in the journal's order. */
export function decodeEntry(row: EntryRow, valueOf: (ref: string) => Json): JournalEntry {
  const body = { ...row.body };
  const field = VALUE_FIELDS[row.kind as JournalEntry["kind"]];
  if (field !== undefined) body[field] = valueOf(body[field] as string);
  const entry = { ...body, seq: row.seq, kind: row.kind, at: Number(row.at) } as Record<
    string,
    unknown
  >;
  if (row.callsite !== null) entry.callsite = row.callsite;
  return orderEntry(entry as unknown as JournalEntry);
}
