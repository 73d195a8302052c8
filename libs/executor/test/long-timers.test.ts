/**
 * Issue 17: a sleep of more than 24.8 days busy-looped (Node fires a setTimeout past 2^31-1 ms
 * after 1 ms), and a wait past the last date JavaScript can name made the run unshowable or
 * failed it. Host side: far timers are armed in steps. Guest side: the largest wait is the one
 * that ends on that last date, and a longer one throws a RangeError the script can catch.
 */
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { runInProcess } from "@rewind/executor";
import { Sandbox, compileScript } from "@rewind/sandbox";
import { LONGEST_TIMEOUT_MS, armUntil } from "../src/live/long-timer.js";

const DAY = 86_400_000;
const LAST_DUE = 8.64e15;

describe("the executor's far timers", () => {
  afterEach(() => vi.useRealTimers());

  const far = [
    { name: "30 days", ms: 30 * DAY, wakes: 2 },
    { name: "a year", ms: 365 * DAY, wakes: 15 },
  ];
  for (const { name, ms, wakes } of far) {
    it(`wakes ${wakes} times for ${name}, and fires once, on time`, () => {
      vi.useFakeTimers({ now: Date.UTC(2026, 11, 1) });
      const due = Date.now() + ms;
      let armed = 0;
      const fired: number[] = [];
      armUntil(
        due,
        Date.now,
        () => fired.push(Date.now()),
        () => armed++,
      );
      vi.advanceTimersByTime(10_000); // a busy loop would have woken ~10,000 times by now
      expect(armed).toBe(1);
      vi.advanceTimersByTime(ms);
      expect(fired).toEqual([due]);
      expect(armed).toBe(wakes);
    });
  }

  it("waits for the largest duration without spinning: one step of 2^31-1 ms at a time", () => {
    vi.useFakeTimers({ now: Date.UTC(2026, 11, 1) });
    let armed = 0;
    const fired: number[] = [];
    armUntil(
      LAST_DUE,
      Date.now,
      () => fired.push(Date.now()),
      () => armed++,
    );
    vi.advanceTimersByTime(LONGEST_TIMEOUT_MS - 1);
    expect(armed).toBe(1);
    vi.advanceTimersByTime(1);
    expect(armed).toBe(2);
    expect(fired).toEqual([]);
  });
});

describe("waits in the script", () => {
  const sandbox = new Sandbox();
  afterAll(() => sandbox.dispose());
  const run = async (body: string) => {
    const script = await compileScript({
      source: `import { sleep, waitForSignal } from "rewind";
export default async () => { ${body} };`,
      filename: "waits.ts",
    });
    return runInProcess({ script, sandbox, startAt: Date.UTC(2026, 11, 1) });
  };

  it("sleeps 30 days, a year, and the largest duration, each a durable timer", async () => {
    const result = await run(`
      const start = Date.now();
      await sleep("30d");
      const month = Date.now() - start;
      await sleep("365d");
      const year = Date.now() - start - month;
      await sleep(8.64e15 - Date.now()); // the largest wait: it ends on the last date
      return { month, year, last: new Date().toISOString() };`);
    expect(result.status).toBe("completed");
    expect(result.result).toEqual({
      month: 30 * DAY,
      year: 365 * DAY,
      last: "+275760-09-13T00:00:00.000Z",
    });
    const dues = result.journal.filter((e) => e.kind === "timer.set").map((e) => e.due);
    expect(dues.at(-1)).toBe(LAST_DUE);
  });

  it("refuses a longer wait with a RangeError the script catches, journaling nothing of it", async () => {
    const result = await run(`
      const refused: string[] = [];
      const attempt = async (what: string, wait: () => unknown) => {
        try { await wait(); } catch (error) { refused.push(what + ": " + (error as Error).name + ": " + (error as Error).message); }
      };
      await attempt("sleep", () => sleep(8.64e15 - Date.now() + 1));
      await attempt("setTimeout 9e15", () => setTimeout(() => {}, 9e15));
      await attempt("setTimeout 1e308", () => setTimeout(() => {}, 1e308));
      await attempt("setInterval", () => setInterval(() => {}, 1e308));
      await attempt("signal", () => waitForSignal("go", { timeout: 1e308 }));
      return refused;`);
    expect(result.status).toBe("completed");
    const refused = result.result as string[];
    expect(refused).toHaveLength(5);
    for (const line of refused)
      expect(line).toMatch(/RangeError: .* would end after \+275760-09-13/);
    expect(refused[0]).toMatch(/^sleep: RangeError: sleep\(\)'s duration of 8638203916800001 ms/);
    expect(refused[1]).toContain("wait at most");
    expect(result.journal.some((e) => e.kind === "timer.set")).toBe(false);
  });

  it("keeps setTimeout past 2^31-1 ms durable like sleep: the full delay, not Node's 1 ms", async () => {
    const result = await run(`
      const start = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 2 ** 31));
      return Date.now() - start;`);
    expect(result.result).toBe(2 ** 31);
  });
});
