import { defineToolset } from "@rewind/sdk";

/**
 * A deterministic toolset for the examples: the same call gives the same answer, so a run's
 * journal can be compared with a clean run's. Real toolsets call real services, passing
 * `ctx.callId` as the idempotency key.
 */
export default defineToolset("shop", {
  charge: {
    run: async (args: { orderId: string; cents: number }, ctx) => ({
      id: `ch_${args.orderId}`,
      cents: args.cents,
      idempotencyKey: ctx.callId,
    }),
  },
  sendEmail: {
    run: async (args: { to: string; subject: string }) => ({ sent: true, to: args.to }),
    unsafeToRepeat: true,
    timeout: "30s",
    retries: 3,
  },
  lookup: async (args: { q: string }) => ({ q: args.q, answer: args.q.length }),
  think: async (args: { step: number; notes: string[] }) => ({
    done: args.step >= 4,
    thought: `step ${args.step}: ${args.notes.length} notes`,
  }),
});
