import { randomFillSync } from "node:crypto";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case

/**
 * A new run id: `run_` and 26 base32 characters, the first 10 encoding the creation time so ids
 * sort by creation, the rest random (80 bits).
 */
export function newRunId(now = Date.now()): string {
  let time = "";
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  let random = "";
  const at = randomBytesAt(16);
  for (let i = at; i < at + 16; i++) random += ALPHABET[pool[i]! % 32];
  return `run_${time}${random}`;
}

/** A new 256-bit seed for a run's random stream, as 64 hex digits. */
export function newSeed(): string {
  const at = randomBytesAt(32);
  return pool.toString("hex", at, at + 32);
}

/**
 * Random bytes for ids and seeds, drawn from the system's CSPRNG a pool at a time (as Node's
 * randomUUID does): a call into it per run cost the API more than the rest of making both. Each
 * byte is used once.
 */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

/** The offset in `pool` of `n` fresh random bytes. */
function randomBytesAt(n: number): number {
  if (poolAt + n > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += n;
  return at;
}

export function isSeed(seed: string): boolean {
  return /^[0-9a-f]{64}$/.test(seed);
}

/**
 * The idempotency key of a tool call: stable across every re-execution of the call (it is
 * derived from the run and the call's journal seq, both fixed once the call is journaled).
 */
export function callIdOf(runId: string, seq: number): string {
  return `${runId}/${seq}`;
}
