import { tools } from "rewind";

// A platform verdict: a tool the toolset does not have fails the run (TOOL_NOT_FOUND), while a
// call left in flight (never awaited) still has its outcome recorded.
export default async function main() {
  void tools.echo({ forgotten: true });
  await tools.add({ a: 2, b: 3 });
  await tools.notATool({ x: 1 });
  return "unreachable";
}
