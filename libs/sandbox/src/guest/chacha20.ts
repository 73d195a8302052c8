/**
 * ChaCha20 (RFC 8439) as a deterministic random stream: key = the run's 256-bit seed, nonce = 0,
 * block counter from 0. Guest code: runs inside the isolate, imports nothing.
 */
export class ChaCha20Stream {
  private readonly state = new Uint32Array(16);
  private readonly block = new Uint32Array(16);
  private readonly blockBytes = new Uint8Array(this.block.buffer);
  private offset = 64; // bytes of `block` already used

  constructor(key: Uint8Array, nonce: Uint8Array = new Uint8Array(12), counter = 0) {
    if (key.length !== 32) throw new RangeError("ChaCha20 key must be 32 bytes");
    if (nonce.length !== 12) throw new RangeError("ChaCha20 nonce must be 12 bytes");
    const s = this.state;
    s[0] = 0x61707865;
    s[1] = 0x3320646e;
    s[2] = 0x79622d32;
    s[3] = 0x6b206574;
    for (let i = 0; i < 8; i++) s[4 + i] = readLE32(key, i * 4);
    s[12] = counter >>> 0;
    for (let i = 0; i < 3; i++) s[13 + i] = readLE32(nonce, i * 4);
  }

  /** The next 64-byte keystream block (as 16 little-endian words); advances the counter. */
  nextBlock(): Uint32Array {
    chachaBlock(this.state, this.block);
    this.state[12] = (this.state[12]! + 1) >>> 0;
    this.offset = 0;
    return this.block;
  }

  fill(target: Uint8Array): void {
    for (let i = 0; i < target.length; i++) {
      if (this.offset === 64) this.nextBlock();
      target[i] = this.blockBytes[this.offset++]!;
    }
  }

  nextUint32(): number {
    if (this.offset > 60) this.nextBlock();
    const bytes = this.blockBytes;
    const o = this.offset;
    this.offset += 4;
    return (bytes[o]! | (bytes[o + 1]! << 8) | (bytes[o + 2]! << 16) | (bytes[o + 3]! << 24)) >>> 0;
  }

  /** A double in [0, 1) with 53 random bits, as Math.random promises. */
  nextDouble(): number {
    const high = this.nextUint32() >>> 5; // 27 bits
    const low = this.nextUint32() >>> 6; // 26 bits
    return (high * 67108864 + low) / 9007199254740992;
  }
}

function readLE32(bytes: Uint8Array, at: number): number {
  return (
    (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0
  );
}

function rotl(v: number, n: number): number {
  return (v << n) | (v >>> (32 - n));
}

/** The ChaCha20 block function: 20 rounds over `input`, plus `input`, into `out`. */
export function chachaBlock(input: Uint32Array, out: Uint32Array): void {
  let x0 = input[0]!,
    x1 = input[1]!,
    x2 = input[2]!,
    x3 = input[3]!;
  let x4 = input[4]!,
    x5 = input[5]!,
    x6 = input[6]!,
    x7 = input[7]!;
  let x8 = input[8]!,
    x9 = input[9]!,
    x10 = input[10]!,
    x11 = input[11]!;
  let x12 = input[12]!,
    x13 = input[13]!,
    x14 = input[14]!,
    x15 = input[15]!;
  for (let i = 0; i < 10; i++) {
    // column rounds
    x0 = (x0 + x4) | 0;
    x12 = rotl(x12 ^ x0, 16);
    x8 = (x8 + x12) | 0;
    x4 = rotl(x4 ^ x8, 12);
    x0 = (x0 + x4) | 0;
    x12 = rotl(x12 ^ x0, 8);
    x8 = (x8 + x12) | 0;
    x4 = rotl(x4 ^ x8, 7);
    x1 = (x1 + x5) | 0;
    x13 = rotl(x13 ^ x1, 16);
    x9 = (x9 + x13) | 0;
    x5 = rotl(x5 ^ x9, 12);
    x1 = (x1 + x5) | 0;
    x13 = rotl(x13 ^ x1, 8);
    x9 = (x9 + x13) | 0;
    x5 = rotl(x5 ^ x9, 7);
    x2 = (x2 + x6) | 0;
    x14 = rotl(x14 ^ x2, 16);
    x10 = (x10 + x14) | 0;
    x6 = rotl(x6 ^ x10, 12);
    x2 = (x2 + x6) | 0;
    x14 = rotl(x14 ^ x2, 8);
    x10 = (x10 + x14) | 0;
    x6 = rotl(x6 ^ x10, 7);
    x3 = (x3 + x7) | 0;
    x15 = rotl(x15 ^ x3, 16);
    x11 = (x11 + x15) | 0;
    x7 = rotl(x7 ^ x11, 12);
    x3 = (x3 + x7) | 0;
    x15 = rotl(x15 ^ x3, 8);
    x11 = (x11 + x15) | 0;
    x7 = rotl(x7 ^ x11, 7);
    // diagonal rounds
    x0 = (x0 + x5) | 0;
    x15 = rotl(x15 ^ x0, 16);
    x10 = (x10 + x15) | 0;
    x5 = rotl(x5 ^ x10, 12);
    x0 = (x0 + x5) | 0;
    x15 = rotl(x15 ^ x0, 8);
    x10 = (x10 + x15) | 0;
    x5 = rotl(x5 ^ x10, 7);
    x1 = (x1 + x6) | 0;
    x12 = rotl(x12 ^ x1, 16);
    x11 = (x11 + x12) | 0;
    x6 = rotl(x6 ^ x11, 12);
    x1 = (x1 + x6) | 0;
    x12 = rotl(x12 ^ x1, 8);
    x11 = (x11 + x12) | 0;
    x6 = rotl(x6 ^ x11, 7);
    x2 = (x2 + x7) | 0;
    x13 = rotl(x13 ^ x2, 16);
    x8 = (x8 + x13) | 0;
    x7 = rotl(x7 ^ x8, 12);
    x2 = (x2 + x7) | 0;
    x13 = rotl(x13 ^ x2, 8);
    x8 = (x8 + x13) | 0;
    x7 = rotl(x7 ^ x8, 7);
    x3 = (x3 + x4) | 0;
    x14 = rotl(x14 ^ x3, 16);
    x9 = (x9 + x14) | 0;
    x4 = rotl(x4 ^ x9, 12);
    x3 = (x3 + x4) | 0;
    x14 = rotl(x14 ^ x3, 8);
    x9 = (x9 + x14) | 0;
    x4 = rotl(x4 ^ x9, 7);
  }
  out[0] = x0 + input[0]!;
  out[1] = x1 + input[1]!;
  out[2] = x2 + input[2]!;
  out[3] = x3 + input[3]!;
  out[4] = x4 + input[4]!;
  out[5] = x5 + input[5]!;
  out[6] = x6 + input[6]!;
  out[7] = x7 + input[7]!;
  out[8] = x8 + input[8]!;
  out[9] = x9 + input[9]!;
  out[10] = x10 + input[10]!;
  out[11] = x11 + input[11]!;
  out[12] = x12 + input[12]!;
  out[13] = x13 + input[13]!;
  out[14] = x14 + input[14]!;
  out[15] = x15 + input[15]!;
}
