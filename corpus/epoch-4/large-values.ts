import { tools, waitForSignal } from "rewind";

// Values over 64 KiB (stored in the blob store, not in the row): arguments, results, a signal's
// payload and the run's result.
export default async function main(input: { fill: string }) {
  const big = await tools.big({ kib: 100, fill: input.fill });
  const echoed = (await tools.echo({ big: big.text, extra: "x".repeat(70 * 1024) })) as {
    echoed: { big: string; extra: string };
  };
  const payload = await waitForSignal<{ blob: string }>("upload");
  console.log("sizes", big.text.length, echoed.echoed.extra.length, payload?.blob.length);
  return { copy: payload!.blob + big.text.slice(0, 1024), length: big.text.length };
}
