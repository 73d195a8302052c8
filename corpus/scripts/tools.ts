import { defineToolset } from "@rewind/sdk";

/**
 * The corpus's toolset: deterministic answers, so the generator's journals depend only on the
 * platform. Replaying a corpus journal calls none of these (results come from the journal).
 */
export default defineToolset("corpus", {
  echo: async (args: unknown) => ({ echoed: args }),
  add: async (args: { a: number; b: number }) => args.a + args.b,
  fail: async (args: { why: string }) => {
    const error = new Error(`failed on purpose: ${args.why}`);
    (error as Error & { code: string }).code = "CORPUS_FAILURE";
    throw error;
  },
  /** A value of `kib` KiB, over the 64 KiB a row keeps inline when kib > 64. */
  big: async (args: { kib: number; fill: string }) => ({
    text: args.fill
      .repeat(Math.ceil((args.kib * 1024) / args.fill.length))
      .slice(0, args.kib * 1024),
  }),
  fetch: async (args: { url: string; method: string; body: string | null }) => ({
    status: args.url.endsWith("/missing") ? 404 : 200,
    statusText: args.url.endsWith("/missing") ? "Not Found" : "OK",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ url: args.url, method: args.method, sent: args.body }),
  }),
});
