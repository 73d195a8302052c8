import { tools } from "rewind";

/** broken.ts corrected: forked from broken.ts's journal, its first two charges are reused. */
export default async function main(input: { orders: string[] }) {
  const charged: string[] = [];
  for (const orderId of input.orders) {
    const charge = await tools.charge({ orderId, cents: 1200 });
    charged.push(charge.id);
  }
  return { charged };
}
