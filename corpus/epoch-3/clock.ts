import { sleep, tools } from "rewind";

// The logical clock: Date.now() is the time of the last event delivered; it moves only when the
// outside world speaks (a result, a timer, a signal), identically on replay.
export default async function main() {
  const t0 = Date.now();
  const d0 = new Date().toISOString();
  const p0 = performance.now();
  await tools.echo({ t0, d0, p0 });
  const t1 = Date.now();
  await sleep("10d");
  const t2 = Date.now();
  await sleep(1500);
  const t3 = new Date();
  console.log("clock", t1 - t0, t2 - t0, t3.getTime() - t0, performance.now());
  return {
    start: d0,
    afterCall: t1 - t0,
    afterTenDays: t2 - t0,
    end: t3.toISOString(),
    utcHour: t3.getHours(),
    parsed: Date.parse("2025-03-04T05:06:07Z"),
    local: new Date(2025, 0, 1).getTime(),
  };
}
