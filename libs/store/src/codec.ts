import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";
import { RewindError } from "@rewind/core";

/**
 * The payload codec (docs/codec.md): a namespace's values encrypted at rest with AES-256-GCM,
 * as Temporal's data converter does. It sits at the store's value seam, where a value becomes
 * the text a row or a blob holds: that text is either canonical JSON or a sealed value,
 *
 *     rwc2:<key id>:<base64url of iv (12 bytes) · ciphertext · tag (16 bytes)>
 *
 * authenticated with the namespace it belongs to (AAD), so a value moved to another namespace's
 * row does not open. `rwc1:` values (sealed before that binding, with a constant AAD) still open.
 *
 * Canonical JSON never starts with `r` (it opens with `{ [ " - t f n` or a digit), so one look
 * at the first character tells the two apart: no flag column, and a namespace may switch the
 * codec on or off at any time, old values staying readable either way.
 */
export const SEALED_PREFIX = "rwc2:";
/** Values sealed before they were bound to their namespace: still opened, never written. */
const LEGACY_PREFIX = "rwc1:";

/** The variable the keys come from: `id:base64key,id:base64key`; the first encrypts. */
export const CODEC_KEYS_ENV = "REWIND_CODEC_KEYS";

const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
/** What an `rwc1:` value was authenticated with: the format alone. */
const LEGACY_AAD = Buffer.from("rewind payload codec v1");
/**
 * What an `rwc2:` value is authenticated with: the format and the value's namespace. Someone who
 * can write the database cannot make one tenant's row hold another's value: it fails to open.
 */
function aadOf(namespace: string): Buffer {
  return Buffer.from(`rewind payload codec v2\u0000${namespace}`);
}

export class PayloadCodec {
  private readonly keys: ReadonlyMap<string, Buffer>;
  /** The key new values are sealed with: the first listed. */
  readonly encryptingKeyId: string;

  constructor(keys: readonly { id: string; key: Buffer }[]) {
    if (keys.length === 0) throw new Error("a payload codec needs at least one key");
    this.keys = new Map(keys.map((k) => [k.id, k.key]));
    this.encryptingKeyId = keys[0]!.id;
  }

  /** The ids of every key this process holds (none of the key bytes). */
  get keyIds(): string[] {
    return [...this.keys.keys()];
  }

  /** `canonical` sealed for `namespace`: it opens only as a value of that namespace. */
  seal(canonical: string, namespace: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.keys.get(this.encryptingKeyId)!, iv);
    cipher.setAAD(aadOf(namespace));
    const body = Buffer.concat([
      iv,
      cipher.update(canonical, "utf8"),
      cipher.final(),
      cipher.getAuthTag(),
    ]);
    return `${SEALED_PREFIX}${this.encryptingKeyId}:${body.toString("base64url")}`;
  }

  /**
   * A digest of `text` that only a holder of the key can compute or check: what a sealed
   * namespace stores where a plain hash would let anyone with the database confirm a guessed
   * value (a start's request digest). HMAC-SHA256 under a subkey of the sealing key.
   */
  keyedDigest(text: string): string {
    return `${DIGEST_PREFIX}${this.encryptingKeyId}:${this.hmac(this.encryptingKeyId, text)}`;
  }

  /** Whether `stored` (a keyedDigest, under any key listed) is the digest of `text`. */
  matchesDigest(stored: string, text: string): boolean {
    const rest = stored.slice(DIGEST_PREFIX.length);
    const keyId = rest.slice(0, rest.indexOf(":"));
    if (!this.keys.has(keyId)) throw missingKey(keyId, this.keyIds);
    return rest.slice(keyId.length + 1) === this.hmac(keyId, text);
  }

  private hmac(keyId: string, text: string): string {
    const subkey = createHmac("sha256", this.keys.get(keyId)!).update("rewind digest v1").digest();
    return createHmac("sha256", subkey).update(text).digest("hex");
  }

  /** A sealed value of `namespace` opened; one of another namespace (moved at rest) is refused. */
  open(sealed: string, namespace: string): string {
    const legacy = sealed.startsWith(LEGACY_PREFIX);
    const { keyId, body } = splitSealed(sealed);
    const key = this.keys.get(keyId);
    if (key === undefined) throw missingKey(keyId, this.keyIds);
    if (body.length < IV_BYTES + TAG_BYTES) throw damaged(keyId);
    const decipher = createDecipheriv("aes-256-gcm", key, body.subarray(0, IV_BYTES));
    decipher.setAAD(legacy ? LEGACY_AAD : aadOf(namespace));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    try {
      return Buffer.concat([
        decipher.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)),
        decipher.final(),
      ]).toString("utf8");
    } catch {
      throw new RewindError(
        "UNAVAILABLE",
        `A value sealed with payload codec key "${keyId}" does not open with the key of that id in ` +
          `${CODEC_KEYS_ENV} as a value of namespace ${namespace}: the key's bytes differ from the ones ` +
          `it was sealed with, or the value was altered or moved from another namespace's row. Put ` +
          `the original key back under that id; a value moved between namespaces never opens`,
        { keyId, namespace },
      );
    }
  }
}

/** A digest keyed by the codec: `hmac1:<key id>:<hex>` (keyedDigest). */
const DIGEST_PREFIX = "hmac1:";

/** Whether a stored value's text is sealed (else it is canonical JSON). */
export function isSealed(text: string): boolean {
  return (
    text.charCodeAt(0) === 114 /* r */ &&
    (text.startsWith(SEALED_PREFIX) || text.startsWith(LEGACY_PREFIX))
  );
}

export function isKeyedDigest(text: string): boolean {
  return text.startsWith(DIGEST_PREFIX);
}

/** Whether a keyedDigest is that of `text`; without the key it names, a clear refusal. */
export function matchesKeyedDigest(
  codec: PayloadCodec | undefined,
  stored: string,
  text: string,
): boolean {
  if (codec === undefined) throw missingKey(stored.split(":")[1] ?? "", []);
  return codec.matchesDigest(stored, text);
}

/** A stored value's text as canonical JSON: opened with `codec` if sealed, as `namespace`'s. */
export function openText(text: string, codec: PayloadCodec | undefined, namespace: string): string {
  if (!isSealed(text)) return text;
  if (codec === undefined) throw missingKey(splitSealed(text).keyId, []);
  return codec.open(text, namespace);
}

/**
 * The codec `REWIND_CODEC_KEYS` names, or undefined when it is unset or empty. Each key is
 * 32 bytes in base64 (`openssl rand -base64 32`); ids are letters, digits, `_`, `.` and `-`.
 */
export function codecFromKeys(text: string | undefined): PayloadCodec | undefined {
  if (text === undefined || text.trim() === "") return undefined;
  const keys: { id: string; key: Buffer }[] = [];
  for (const part of text.split(",")) {
    const item = part.trim();
    const colon = item.indexOf(":");
    const id = colon < 0 ? "" : item.slice(0, colon);
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(id))
      throw invalidKeys(
        `"${item.slice(0, 16)}…" is not id:base64key (an id of letters, digits, _ . -)`,
      );
    if (keys.some((k) => k.id === id)) throw invalidKeys(`the key id "${id}" is listed twice`);
    const encoded = item.slice(colon + 1);
    const key = Buffer.from(encoded, "base64");
    if (key.length !== KEY_BYTES || !/^[A-Za-z0-9+/_-]+=*$/.test(encoded))
      throw invalidKeys(
        `the key "${id}" is ${key.length} bytes, not ${KEY_BYTES} in base64 (make one with \`openssl rand -base64 32\`)`,
      );
    keys.push({ id, key });
  }
  return new PayloadCodec(keys);
}

function splitSealed(sealed: string): { keyId: string; body: Buffer } {
  const rest = sealed.slice(SEALED_PREFIX.length);
  const colon = rest.indexOf(":");
  const keyId = colon < 0 ? "" : rest.slice(0, colon);
  return { keyId, body: Buffer.from(rest.slice(colon + 1), "base64url") };
}

function missingKey(keyId: string, held: readonly string[]): RewindError {
  return new RewindError(
    "UNAVAILABLE",
    `A value is sealed with payload codec key "${keyId}", which this process does not have: add ` +
      `${keyId}:<its base64 key> to ${CODEC_KEYS_ENV} (keys held: ${held.length === 0 ? "none" : held.join(", ")}; ` +
      `the first key listed seals new values, every key listed opens old ones)`,
    { keyId },
  );
}

function damaged(keyId: string): RewindError {
  return new RewindError(
    "UNAVAILABLE",
    `A value sealed with payload codec key "${keyId}" is truncated: the row holding it was altered`,
    { keyId },
  );
}

function invalidKeys(what: string): RewindError {
  return new RewindError("INVALID_INPUT", `${CODEC_KEYS_ENV} is malformed: ${what}`);
}
