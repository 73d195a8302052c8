import { sleep, tools, waitForSignal } from "rewind";

// Signals racing timers: one arrives before its timeout, one after (the wait times out), one
// while the script sleeps (it waits in line until asked for).
export default async function main() {
  const approval = await waitForSignal<{ approved: boolean }>("approval", { timeout: "3d" });
  const late = await waitForSignal("late", { timeout: "1h" });
  await sleep("2d");
  const early = await waitForSignal<{ n: number }>("early", { timeout: "1m" });
  const raced = await Promise.race([
    waitForSignal("go").then(() => "signal"),
    sleep("5h").then(() => "timer"),
  ]);
  await tools.echo({ approval, late: late ?? null, early, raced });
  return { approved: approval?.approved ?? false, late: late === undefined, early, raced };
}
