/**
 * Sends requests to the API "as fast as it takes them": `concurrency` requests in flight, each
 * next one sent when one is answered. Records when each was sent (Date.now(), to compare with
 * the database's times) and how long the API took to answer.
 */
import type { Json } from "@rewind/core";
import type { Rewind } from "@rewind/sdk";
import { TOOLSET, hashOf, type Script } from "./scripts.js";

export interface Sent<T> {
  results: T[];
  /** Date.now() when request i was sent. */
  sentAt: Float64Array;
  /** How long request i took to be answered, ms. */
  answerMs: Float64Array;
  /** From the first request sent to the last answered, ms. */
  elapsedMs: number;
}

export async function sendAll<T>(
  count: number,
  concurrency: number,
  send: (i: number) => Promise<T>,
  what: string,
  timeoutMs: number,
): Promise<Sent<T>> {
  const results = new Array<T>(count);
  const sentAt = new Float64Array(count);
  const answerMs = new Float64Array(count);
  const t0 = performance.now();
  let next = 0;
  let failed = false; // one failure stops every lane
  const lane = async () => {
    while (next < count && !failed) {
      const i = next++;
      if (performance.now() - t0 > timeoutMs) {
        failed = true;
        throw new Error(`${what}: only ${i} of ${count} requests sent in ${timeoutMs / 1000} s`);
      }
      sentAt[i] = Date.now();
      const start = performance.now();
      try {
        results[i] = await send(i);
      } catch (error) {
        failed = true;
        throw new Error(`${what}: request ${i} failed: ${(error as Error).message}`);
      }
      answerMs[i] = performance.now() - start;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  return { results, sentAt, answerMs, elapsedMs: performance.now() - t0 };
}

/**
 * Starts `count` runs of `script`: the first request carries the compiled script (the API stores
 * it), the others name it by hash, `concurrency` in flight.
 */
export async function startRuns(
  client: Rewind,
  script: Script,
  input: (i: number) => Json,
  count: number,
  concurrency: number,
  what: string,
  timeoutMs: number,
): Promise<Sent<string>> {
  const t0 = performance.now();
  const sentFirst = Date.now();
  const first = await client.runs.start({ script, input: input(0), toolset: TOOLSET });
  const firstMs = performance.now() - t0;
  const rest = await sendAll(
    count - 1,
    concurrency,
    async (i) =>
      (await client.runs.start({ script: hashOf(script), input: input(i + 1), toolset: TOOLSET }))
        .id,
    what,
    timeoutMs,
  );
  return {
    results: [first.id, ...rest.results],
    sentAt: Float64Array.of(sentFirst, ...rest.sentAt),
    answerMs: Float64Array.of(firstMs, ...rest.answerMs),
    elapsedMs: performance.now() - t0,
  };
}
