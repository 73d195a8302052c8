import { tools, waitForSignal } from "rewind";

// A run still open: its journal ends while it waits for a signal that has not come yet.
export default async function main(input: { customer: string }) {
  const quote = await tools.add({ a: 40, b: 2 });
  console.log("quote", quote, "for", input.customer);
  const decision = await waitForSignal<{ accept: boolean }>("decision");
  return { quote, accepted: decision?.accept ?? false };
}
