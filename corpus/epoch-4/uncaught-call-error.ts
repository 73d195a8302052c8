import { tools } from "rewind";

// A call's error nobody catches fails the run, with the tool's message.
export default async function main() {
  await tools.add({ a: 1, b: 1 });
  await tools.fail({ why: "nobody catches this" });
  return "unreachable";
}
