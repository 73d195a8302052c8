import { tools } from "rewind";

// Math.random, crypto.getRandomValues and crypto.randomUUID draw from one ChaCha20 stream keyed by
// the run's seed: the same draws in the same order on every replay.
export default async function main() {
  const first = [Math.random(), Math.random(), Math.random()];
  const bytes = Array.from(crypto.getRandomValues(new Uint8Array(16)));
  const words = Array.from(crypto.getRandomValues(new Uint32Array(4)));
  const uuid = crypto.randomUUID();
  await tools.echo({ first, bytes, words, uuid });
  const after = Math.floor(Math.random() * 1_000_000);
  const shuffled = ["a", "b", "c", "d", "e", "f"].sort(() => Math.random() - 0.5);
  await tools.echo({ after, shuffled });
  return { uuid, after, shuffled, last: crypto.randomUUID() };
}
