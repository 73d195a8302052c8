import { tools } from "rewind";

// A tool's error reaches the script as a rejected call (call.error), caught here; then the script
// throws, and the run fails with the source-mapped error (run.failed, SCRIPT_ERROR).
class OrderError extends Error {
  override name = "OrderError";
}

export default async function main(input: { orderId: string }) {
  let caught: unknown = null;
  try {
    await tools.fail({ why: "the card was declined" });
  } catch (error) {
    const e = error as Error & { code?: string };
    caught = { name: e.name, message: e.message, code: e.code ?? null };
  }
  console.log("caught", caught);
  try {
    JSON.parse("{not json");
  } catch (error) {
    console.log("parse error:", (error as Error).message);
  }
  await tools.echo({ caught });
  throw new OrderError(`order ${input.orderId} cannot be charged`);
}
