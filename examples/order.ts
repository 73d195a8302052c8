import { tools, sleep, waitForSignal } from "rewind";

/** An order: charge (idempotently), wait up to 3 days for approval, wait ten days, ship. */
export default async function main(input: { orderId: string }) {
  const charge = await tools.charge({ orderId: input.orderId, cents: 1200 });
  const ok = await waitForSignal<{ approved: boolean }>("approval", { timeout: "3d" });
  if (!ok?.approved) return { status: "rejected" };
  await sleep("10d");
  console.log("shipping", charge.id);
  await tools.sendEmail({ to: "buyer@example.com", subject: `order ${input.orderId} shipped` });
  return { status: "shipped", at: new Date().toISOString() };
}
