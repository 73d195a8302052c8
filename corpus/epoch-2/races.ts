import { sleep, tools } from "rewind";

// Promise.race of timers against calls, Promise.all and Promise.any: decided by the order in
// which events were delivered, which is the journal's order.
export default async function main() {
  const slowOrTimeout = await Promise.race([
    tools.echo({ slow: true }).then(() => "call"),
    sleep("2s").then(() => "timer"),
  ]);
  const fastOrTimeout = await Promise.race([
    tools.add({ a: 1, b: 2 }).then((n) => `call ${String(n)}`),
    sleep("1h").then(() => "timer"),
  ]);
  const all = await Promise.all([
    tools.add({ a: 10, b: 1 }),
    tools.add({ a: 20, b: 2 }),
    tools.echo({ k: "third" }),
  ]);
  const any = await Promise.any([tools.fail({ why: "any" }), sleep(10).then(() => "timer won")]);
  const settled = await Promise.allSettled([
    tools.fail({ why: "settled" }),
    tools.add({ a: 2, b: 2 }),
  ]);
  return {
    slowOrTimeout,
    fastOrTimeout,
    all,
    any,
    settled: settled.map((s) => s.status),
  };
}
