import { describe, expect, it } from "vitest";
import { waitingFor } from "./waiting.js";

describe("waitingFor", () => {
  it("names a pending timer by its due date", () => {
    expect(waitingFor([{ seq: 2, kind: "timer.set", at: 0, due: 86_400_000 }], "run_a")).toEqual([
      "timer due 1970-01-02T00:00:00.000Z (seq 2)",
    ]);
  });

  it("names a timer due past the last date instead of failing (issue 17: setTimeout(f, 9e15))", () => {
    // An epoch-1 run waiting on such a timer made `rewind runs show` and `rewind run --wait`
    // fail with "Invalid time value".
    expect(waitingFor([{ seq: 2, kind: "timer.set", at: 0, due: 9e15 }], "run_a")).toEqual([
      "timer due 9000000000000000 ms after 1970 (past the last date) (seq 2)",
    ]);
  });
});
