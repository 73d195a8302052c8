import {
  canonicalize,
  orderEntry,
  valueRefOfCanonical,
  type Json,
  type JournalEntry,
} from "@rewind/core";
import { openText, type PayloadCodec } from "./codec.js";

/**
 * How a run's values are sealed before they are stored (the payload codec, codec.ts), or
 * undefined for plain canonical JSON: the store decides it per namespace.
 */
export type Seal = ((canonical: string) => string) | undefined;

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
  /** The text stored: the value's canonical JSON, or that sealed by the payload codec. */
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
 * An entry as a row: a small value inline as its stored text, a larger one replaced by its
 * reference (and returned beside the row, to be stored once). Under a seal the stored text is the
 * sealed value and the reference is the hash of that text, never of the plaintext: the IV is
 * random, so two namespaces (or two runs) storing the same value store two unrelated rows, and
 * nothing in the database tells that their values are equal (docs/codec.md).
 */
export function encodeEntry(
  entry: JournalEntry,
  seal?: Seal,
): {
  row: EntryRow;
  value?: EncodedValue;
  inline?: string;
} {
  const encoded = encodeFields(entry, seal);
  encoded.row = shieldText(encoded.row);
  return encoded;
}

/**
 * Text Postgres cannot hold: U+0000 (in text or jsonb, "unsupported Unicode escape sequence") and
 * a lone UTF-16 surrogate (in jsonb, "invalid input syntax for type json"; in text, silently
 * replaced). A script may put either in anything it emits: a line of output, a tool's name, an
 * error's message, a callsite (a file name in its source map). Refused, the commit failed on every
 * attempt and the run was retried forever (issue 17).
 */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A row holding such text keeps its body and callsite whole as JSON text under `bodyJson` (where
 * each is an escape, \u0000 or \ud800), with the fields SQL reads from a body (a report's reason,
 * the redacted rules) beside it in the clear. Values are not concerned: they are stored as
 * canonical JSON text already.
 */
function shieldText(row: EntryRow): EntryRow {
  if (!holdsUnstorable(row.body) && !holdsUnstorable(row.callsite)) return row;
  const whole = row.callsite === null ? row.body : { ...row.body, callsite: row.callsite };
  const body: Record<string, unknown> = { bodyJson: JSON.stringify(whole) };
  const report = row.body.report as { reason?: unknown } | null | undefined;
  const reason = row.body.reason ?? report?.reason;
  if (typeof reason === "string" && !holdsUnstorable(reason)) body.reason = reason;
  if (row.body.redacted !== undefined && !holdsUnstorable(row.body.redacted))
    body.redacted = row.body.redacted;
  return { ...row, callsite: null, body };
}

/** Whether a string of this JSON value (keys too) holds text Postgres cannot store. */
export function holdsUnstorable(value: unknown): boolean {
  if (typeof value === "string") return UNSTORABLE.test(value);
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) return value.some(holdsUnstorable);
  for (const [key, item] of Object.entries(value))
    if (UNSTORABLE.test(key) || holdsUnstorable(item)) return true;
  return false;
}

/** A row as stored, with a body kept as JSON text (see shieldText) opened again. */
export function openRow<R extends Pick<EntryRow, "body" | "callsite">>(row: R): R {
  const shielded = row.body.bodyJson;
  if (typeof shielded !== "string") return row;
  const { callsite, ...body } = JSON.parse(shielded) as Record<string, unknown>;
  return { ...row, body, callsite: typeof callsite === "string" ? callsite : null };
}

function encodeFields(
  entry: JournalEntry,
  seal?: Seal,
): {
  row: EntryRow;
  value?: EncodedValue;
  inline?: string;
} {
  const { seq, kind, at, callsite, ...rest } = entry as JournalEntry & Record<string, unknown>;
  const body: Record<string, unknown> = rest;
  delete body.kind;
  const row = { seq, kind, at, callsite: callsite ?? null, body };
  if (seal !== undefined && kind === "output") {
    // Console output is not JSON (a script may print anything, `rwc2:` too): sealed, it moves
    // to a field of its own.
    body.textSealed = seal(body.text as string);
    delete body.text;
    return { row };
  }
  if (seal !== undefined && kind === "run.quarantined") {
    // A divergence report quotes the run's values (short forms of arguments): sealed too. Its
    // reason stays in the clear beside it, for the counts by reason (quarantine.ts).
    const report = body.report as { reason?: unknown } | null;
    body.reportSealed = seal(canonicalize(report));
    delete body.report;
    if (typeof report?.reason === "string") body.reason = report.reason;
    return { row };
  }
  const field = VALUE_FIELDS[kind];
  if (field === undefined) return { row };
  const canonical = canonicalize(body[field]);
  delete body[field];
  const text = seal === undefined ? canonical : seal(canonical);
  if (text.length <= IN_ENTRY_LIMIT) {
    body[`${field}Json`] = text;
    return { row, inline: text };
  }
  const value = { ref: valueRefOfCanonical(text), canonical: text, size: Buffer.byteLength(text) };
  body[`${field}Ref`] = value.ref;
  return { row, value };
}

/** A value stored apart (a signal's payload), sealed under `seal`. */
export function encodeValue(json: Json, seal?: Seal): EncodedValue {
  const canonical = canonicalize(json);
  const text = seal === undefined ? canonical : seal(canonical);
  return { ref: valueRefOfCanonical(text), canonical: text, size: Buffer.byteLength(text) };
}

/** The reference a row's body holds, if its value is stored apart. */
/** The field of an entry of this kind that holds a value (`args` of a call), if one does. */
export function valueFieldOf(kind: string): string | undefined {
  return VALUE_FIELDS[kind as JournalEntry["kind"]];
}

export function refOf(stored: Pick<EntryRow, "kind" | "body" | "callsite">): string | undefined {
  const row = openRow(stored);
  const field = VALUE_FIELDS[row.kind as JournalEntry["kind"]];
  return field === undefined ? undefined : (row.body[`${field}Ref`] as string | undefined);
}

/**
 * A row back to an entry, its value read inline or looked up by reference (`valueOf` answers
 * opened values), a sealed one opened with `codec`.
 */
export function decodeEntry(
  stored: EntryRow,
  valueOf: (ref: string) => Json,
  codec: PayloadCodec | undefined,
  namespace: string,
): JournalEntry {
  const row = openRow(stored);
  const body = { ...row.body };
  const field = VALUE_FIELDS[row.kind as JournalEntry["kind"]];
  if (field !== undefined) {
    const inline = body[`${field}Json`];
    const ref = body[`${field}Ref`];
    delete body[`${field}Json`];
    delete body[`${field}Ref`];
    body[field] =
      typeof inline === "string"
        ? (JSON.parse(openText(inline, codec, namespace)) as Json)
        : valueOf(ref as string);
  } else if (typeof body.textSealed === "string") {
    body.text = openText(body.textSealed, codec, namespace);
    delete body.textSealed;
  } else if (typeof body.reportSealed === "string") {
    body.report = openReport(body, codec, namespace);
    delete body.reportSealed;
    delete body.reason;
  }
  const entry = { ...body, seq: row.seq, kind: row.kind, at: Number(row.at) } as Record<
    string,
    unknown
  >;
  if (row.callsite !== null) entry.callsite = row.callsite;
  return orderEntry(entry as unknown as JournalEntry);
}

/** A run.quarantined row's report: in the clear, or sealed with its reason beside it. */
export function openReport(
  body: Record<string, unknown>,
  codec: PayloadCodec | undefined,
  namespace: string,
): Json {
  if (typeof body.reportSealed !== "string") return (body.report as Json | undefined) ?? null;
  return JSON.parse(openText(body.reportSealed, codec, namespace)) as Json;
}
