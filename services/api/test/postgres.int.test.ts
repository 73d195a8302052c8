/** The API's main paths once more against a real Postgres (the others run on PGlite). */
import { afterAll, beforeAll, expect, it } from "vitest";
import { completeRun, errorOf, openHarness, startRun, type Harness } from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await openHarness({ postgres: true });
});
afterAll(async () => h.close());

it("creates a run, takes a signal, long-polls its result and refuses a late signal", async () => {
  const id = await startRun(h, { input: { name: "Ada" } });
  expect(h.rings).toEqual([id]);
  const signal = await h.app.inject({
    method: "POST",
    url: `/v1/runs/${id}/signals/approval`,
    headers: h.auth,
    payload: { approved: true },
  });
  expect(signal.statusCode).toBe(202);
  expect(await h.store.pendingInbox(id)).toHaveLength(1);

  const pending = h.app.inject({ url: `/v1/runs/${id}/result?wait=20s`, headers: h.auth });
  await new Promise((resolve) => setTimeout(resolve, 300));
  await completeRun(h.store, id, "hello Ada");
  expect((await pending).json()).toEqual({
    id,
    status: "completed",
    ended: true,
    result: "hello Ada",
  });

  const late = await h.app.inject({
    method: "POST",
    url: `/v1/runs/${id}/signals/approval`,
    headers: h.auth,
  });
  expect(late.statusCode).toBe(409);
  expect(errorOf(late).code).toBe("CONFLICT");
  const theirs = await h.app.inject({ url: `/v1/runs/${id}`, headers: h.otherAuth });
  expect(theirs.statusCode).toBe(404);
});
