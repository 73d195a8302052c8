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
  for (const byte of freshRandom(16)) random += ALPHABET[byte % 32];
  return `run_${time}${random}`;
}

/** A new 256-bit seed for a run's random stream, as 64 hex digits. */
export function newSeed(): string {
  return freshRandom(32).toString("hex");
}

/**
 * Random bytes for ids and seeds, drawn from the system's CSPRNG a pool at a time (as Node's
 * randomUUID does): a call into it per run cost the API more than the rest of making both. Each
 * byte is used once. Made on first use: no module-level work, so bundles that take only this
 * module's other exports (the replay engine's, whose digest epochs pin) leave all of it out.
 */
let pool: Buffer | undefined;
let poolAt = 0;

/** `n` random bytes never handed out before (a view of the pool). */
function freshRandom(n: number): Buffer {
  if (pool === undefined || poolAt + n > pool.length) {
    pool ??= Buffer.alloc(4096);
    randomFillSync(pool);
    poolAt = 0;
  }
  const bytes = pool.subarray(poolAt, poolAt + n);
  poolAt += n;
  return bytes;
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
