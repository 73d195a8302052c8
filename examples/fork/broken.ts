import { tools } from "rewind";

/**
 * A script with a bug at its third order: run it with `rewind exec --journal`, and it fails after
 * charging two orders. `fixed.ts` is the corrected script to fork that journal with.
 */
export default async function main(input: { orders: string[] }) {
  const charged: string[] = [];
  for (const [index, orderId] of input.orders.entries()) {
    if (index === 2) throw new Error(`bug: order ${orderId} is not handled`);
    const charge = await tools.charge({ orderId, cents: 1200 });
    charged.push(charge.id);
  }
  return { charged };
}
