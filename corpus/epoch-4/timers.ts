import { sleep, tools } from "rewind";

// setTimeout, setInterval, their clear* and sleep are journaled timers (timer.set, timer.cancel,
// timer.fired), fired in due order.
export default async function main() {
  const order: string[] = [];
  const cancelled = setTimeout(() => order.push("never"), 50);
  setTimeout(() => order.push("b@200"), 200);
  setTimeout(() => order.push("a@100"), 100);
  clearTimeout(cancelled);
  let ticks = 0;
  await new Promise<void>((resolve) => {
    const every = setInterval(() => {
      ticks++;
      order.push(`tick${ticks}`);
      if (ticks === 3) {
        clearInterval(every);
        resolve();
      }
    }, 75);
  });
  await sleep("1s");
  await tools.echo({ order });
  setTimeout(() => console.log("zero-delay timer fired"), 0);
  await sleep(1);
  return { order, ticks };
}
