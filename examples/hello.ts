import { tools } from "rewind";

export default async function main(input: { name?: string }) {
  const found = await tools.lookup({ q: input?.name ?? "world" });
  console.log(`hello, ${found.q}`);
  return { greeting: `hello, ${found.q}`, length: found.answer };
}
