/**
 * The operators' endpoints for moving runs between epochs, against a real store (Postgres). The
 * API only records the check: a worker of the target epoch replays the runs (the EpochMigrator,
 * tested with a real sandbox in libs/executor/test/epoch-migrator.int.test.ts, and end to end
 * across Node 20 and 24 in services/worker/test/epoch-upgrade.int.test.ts).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { EPOCHS, isDraft } from "@rewind/sandbox";
import { openHarness, type Harness } from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await openHarness({ postgres: true });
});
afterAll(async () => h.close());

const migrate = (from: number | string, payload: object, auth = h.auth) =>
  h.app.inject({ method: "POST", url: `/v1/epochs/${from}/migrate`, headers: auth, payload });

const released = EPOCHS.filter((e) => !isDraft(e)).map((e) => e.epoch);
const target = EPOCHS.at(-1)!;

it("refuses what cannot be a move, saying what to do", async () => {
  const same = await migrate(1, { to: 1 });
  expect(same.statusCode).toBe(422);
  expect(same.json().error.message).toMatch(/of epoch 1 already/);
  const unknown = await migrate(1, { to: 99 });
  expect(unknown.statusCode).toBe(422);
  expect(unknown.json().error.message).toMatch(/epoch 99 is not one this build supports/);
  expect((await migrate("one", { to: 2 })).statusCode).toBe(422);
  expect((await migrate(1, { to: 2, extra: true })).statusCode).toBe(422);
  expect((await migrate(1, {})).statusCode).toBe(422);
  if (isDraft(target)) {
    const draft = await migrate(released[0]!, { to: target.epoch });
    expect(draft.statusCode).toBe(422);
    expect(draft.json().error.message).toMatch(/is a draft .*allowDraft/);
  }
  // No live worker of the target: nobody could replay the runs there.
  const none = await migrate(released[0]!, { to: target.epoch, allowDraft: true });
  expect(none.statusCode).toBe(409);
  expect(none.json().error.message).toMatch(
    new RegExp(`No live worker runs epoch ${target.epoch}`),
  );
  const anonymous = await h.app.inject({
    method: "POST",
    url: `/v1/epochs/1/migrate`,
    payload: { to: target.epoch },
  });
  expect(anonymous.statusCode).toBe(401);
});

it("records a check for a worker of the target epoch, and shows it to its namespace only", async () => {
  const worker = `api-test-worker-${target.epoch}`;
  await h.store.workerSeen(worker, [target.epoch]);
  try {
    const from = released[0]!;
    const asked = await migrate(from, { to: target.epoch, dryRun: true, allowDraft: true });
    expect(asked.statusCode).toBe(202);
    const check = asked.json();
    expect(check).toMatchObject({ from, to: target.epoch, dryRun: true, state: "pending" });
    expect(check.requestedBy).toEqual(expect.any(String));
    const url = `/v1/epochs/checks/${check.id}`;
    const shown = await h.app.inject({ method: "GET", url, headers: h.auth });
    expect(shown.json()).toMatchObject({ id: check.id, state: "pending" });
    expect((await h.app.inject({ method: "GET", url, headers: h.otherAuth })).statusCode).toBe(404);
    // The live worker is named in the epochs list.
    const epochs = await h.app.inject({ method: "GET", url: "/v1/epochs", headers: h.auth });
    const row = epochs.json().epochs.find((e: { epoch: number }) => e.epoch === target.epoch);
    expect(row.liveWorkers.map((w: { owner: string }) => w.owner)).toContain(worker);
    // A worker takes it and reports: the API answers with the verdicts.
    const taken = await h.store.takeEpochCheck("checker", [target.epoch], 60_000);
    expect(taken?.id).toBe(check.id);
    expect((await h.app.inject({ method: "GET", url, headers: h.auth })).json().state).toBe(
      "checking",
    );
    await h.store.finishEpochCheck(check.id, "checker", {
      checkedBy: worker,
      runtime: "Node 24",
      runs: [{ runId: "run_a", verdict: "would-move", checkedSeq: 4 }],
    });
    expect((await h.app.inject({ method: "GET", url, headers: h.auth })).json()).toMatchObject({
      state: "done",
      checkedBy: worker,
      runs: [{ runId: "run_a", verdict: "would-move", checkedSeq: 4 }],
    });
  } finally {
    await h.store.workerGone(worker);
  }
});
