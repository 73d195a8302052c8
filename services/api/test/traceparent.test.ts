import { afterAll, beforeAll, expect, it } from "vitest";
import { SCRIPT, openHarness, type Harness } from "./harness.js";

// A run's trace is its starting request's (docs/traces.md): POST /v1/runs keeps a valid W3C
// traceparent with the run, in the same transaction as run.started, and ignores an invalid one.

let h: Harness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h.close());

const start = async (traceparent?: string) => {
  const response = await h.app.inject({
    method: "POST",
    url: "/v1/runs",
    headers: { ...h.auth, ...(traceparent === undefined ? {} : { traceparent }) },
    payload: { script: SCRIPT, input: { name: "Ada" } },
  });
  expect(response.statusCode).toBe(201);
  return response.json<{ id: string }>().id;
};

it("keeps the traceparent a run was started with, and ignores an invalid one", async () => {
  const header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  const traced = await start(header);
  expect((await h.store.projectedRun(traced))?.traceparent).toBe(header);
  // All-zero trace id: invalid by the W3C's rules.
  const invalid = await start("00-00000000000000000000000000000000-00f067aa0ba902b7-01");
  expect((await h.store.projectedRun(invalid))?.traceparent).toBeNull();
  const plain = await start();
  expect((await h.store.projectedRun(plain))?.traceparent).toBeNull();
});
