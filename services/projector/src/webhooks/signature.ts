import { createHash, createHmac } from "node:crypto";

/**
 * Standard Webhooks' signature (https://www.standardwebhooks.com): `v1,` and the base64
 * HMAC-SHA256 of `id.timestamp.body`, keyed by the secret's bytes (the base64 after `whsec_`).
 * Several secrets (during a rotation) give several signatures, space-separated: a receiver that
 * knows either secret accepts.
 */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  const content = `${id}.${timestampSeconds}.${body}`;
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
      return `v1,${createHmac("sha256", key).update(content).digest("base64")}`;
    })
    .join(" ");
}

/**
 * The webhook-id of an event: derived from the journal entry (run and seq), so it is the same
 * on every attempt, on a redelivery, and when a second projector makes the same delivery.
 */
export function eventIdOf(runId: string, seq: number): string {
  return `msg_${createHash("sha256").update(`${runId}:${seq}`).digest("hex").slice(0, 24)}`;
}
