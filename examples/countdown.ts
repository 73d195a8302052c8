import { tools, sleep } from "rewind";

/**
 * Counts down with a durable sleep between steps: start it, kill the server during a sleep,
 * start the server again, and watch it carry on from its journal (no step repeated).
 */
export default async function main(input: { from?: number }) {
  const from = input?.from ?? 5;
  for (let n = from; n > 0; n--) {
    const { answer } = await tools.lookup({ q: "x".repeat(n) });
    console.log(`${answer}…`);
    await sleep("3s");
  }
  console.log("liftoff");
  return { counted: from };
}
