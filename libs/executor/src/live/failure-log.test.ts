import { expect, it } from "vitest";
import { traceIdOf } from "@rewind/telemetry";
import { activationFailureLog, quarantineLog } from "./failure-log.js";

it("says a repeated failure once, then how many more there were", () => {
  const lines: string[] = [];
  let clock = 0;
  const fail = activationFailureLog(
    (line) => lines.push(line),
    5_000,
    () => clock,
  );
  const down = new Error("connect ECONNREFUSED 127.0.0.1:5432");
  for (let i = 0; i < 100; i++) fail(`run_${i % 10}`, down);
  expect(lines).toEqual([
    "run run_0: activation failed, retrying: connect ECONNREFUSED 127.0.0.1:5432",
  ]);
  clock = 6_000;
  fail("run_3", down);
  expect(lines.slice(1)).toEqual([
    "… and 99 more failed activation(s) of 10 run(s) with the same error",
    "run run_3: activation failed, retrying: connect ECONNREFUSED 127.0.0.1:5432",
  ]);
  fail("run_4", new Error("something else"));
  expect(lines.at(-1)).toBe("run run_4: activation failed, retrying: something else");
});

it("says a quarantine with the run's id, the entry's seq and the run's trace id", () => {
  const lines: [string, object | undefined][] = [];
  quarantineLog((line, fields) => lines.push([line, fields]))("run_q", 7, "divergence");
  expect(lines).toEqual([
    [
      "run run_q quarantined at seq 7 (divergence): `rewind quarantine show run_q` has the report",
      { runId: "run_q", seq: 7, traceId: traceIdOf("run_q") },
    ],
  ]);
});
