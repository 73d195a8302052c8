/**
 * The operators' endpoints of quarantine, against a real store. The API only stores requests;
 * here the test plays the quarantine service (as the harness plays the executor) by committing
 * what it would. The whole loop with the real service is in services/quarantine/test.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JournalEntry } from "@rewind/core";
import { findEpoch, newRunEpoch } from "@rewind/sandbox";
import { appendAsExecutor, errorOf, openHarness, startRun, type Harness } from "./harness.js";

/** The epoch the API starts runs in here: the newest this runtime serves (2 on Node 20). */
const EPOCH = newRunEpoch();

let h: Harness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h.close());

/** A run the worker quarantined at seq 2 (its replay diverged there). */
async function quarantinedRun(): Promise<string> {
  const id = await startRun(h);
  await appendAsExecutor(
    h.store,
    id,
    (seq) => [
      {
        seq,
        kind: "run.quarantined",
        at: 3_000,
        report: {
          reason: "divergence",
          message: `Run ${id} diverges from its journal at seq 2`,
          runId: id,
          seq: 2,
          matched: 1,
          recorded: {
            kind: "call",
            label: "call charge({ cents: 1200 })",
            callsite: "order.ts:4:9",
          },
          replayed: {
            kind: "call",
            label: "call charge({ cents: 1300 })",
            callsite: "order.ts:4:9",
          },
          runEpoch: EPOCH,
          workerEpochs: [EPOCH],
          worker: { owner: "worker:a", build: "rewind 0.1.0" },
        },
      },
    ],
    "quarantined",
  );
  return id;
}

/** Plays the quarantine service: the entry it would append for the oldest request, consuming all. */
async function actAsService(id: string, make: (seq: number) => JournalEntry): Promise<void> {
  const requests = await h.store.pendingQuarantineRequests(100, [id]);
  const lease = (await h.store.acquireLease(id, "quarantine-test", 30_000))!;
  const seq = lease.lastSeq + 1;
  const entry = make(seq);
  const append = {
    lease,
    afterSeq: lease.lastSeq,
    entries: [entry],
    inboxConsumed: requests.map((r) => ({ id: r.id, seq })),
  };
  const outcome =
    entry.kind === "run.released"
      ? await h.store.commitRelease({ ...append, status: "queued" }, entry.epoch ?? EPOCH)
      : (await h.store.commit([{ ...append, status: "failed" }]))[0];
  expect(outcome).toBe("ok");
  await h.store.releaseLease(lease);
}

const post = (url: string, payload?: object, headers = h.auth) =>
  h.app.inject({ method: "POST", url, headers, ...(payload === undefined ? {} : { payload }) });

describe("quarantine endpoints", () => {
  it("lists quarantined runs with their reports' summaries, and shows one", async () => {
    const id = await quarantinedRun();
    const list = await h.app.inject({ method: "GET", url: "/v1/quarantine", headers: h.auth });
    expect(list.statusCode).toBe(200);
    const mine = list.json().runs.find((r: { id: string }) => r.id === id);
    expect(mine).toMatchObject({
      id,
      status: "quarantined",
      epoch: EPOCH,
      seq: 2,
      reason: "divergence",
      divergence: {
        seq: 2,
        recorded: { callsite: "order.ts:4:9", label: "call charge({ cents: 1200 })" },
        replayed: { callsite: "order.ts:4:9" },
      },
      runEpoch: EPOCH,
      workerEpochs: [EPOCH],
      worker: { build: "rewind 0.1.0" },
      pending: [],
    });
    const other = await h.app.inject({
      method: "GET",
      url: "/v1/quarantine",
      headers: h.otherAuth,
    });
    expect(other.json().runs).toEqual([]);

    const show = await h.app.inject({
      method: "GET",
      url: `/v1/quarantine/${id}`,
      headers: h.auth,
    });
    expect(show.json()).toMatchObject({
      quarantined: true,
      run: { id, status: "quarantined" },
      current: { seq: 2 },
      report: { worker: { owner: "worker:a" } },
      history: [{ seq: 2, kind: "run.quarantined" }],
    });
  });

  it("release: asks once, however often it is asked, and answers the current state after", async () => {
    const id = await quarantinedRun();
    const first = await post(`/v1/quarantine/${id}/release?wait=0`);
    expect(first.statusCode).toBe(202);
    expect(first.json()).toMatchObject({ action: "release", state: "pending", run: { id } });
    const again = await post(`/v1/quarantine/${id}/release?wait=0`, {});
    expect(again.statusCode).toBe(202);
    expect(again.json().request).toEqual(first.json().request); // the same request, not another
    expect(await h.store.pendingQuarantineRequests(100, [id])).toMatchObject([
      { action: "release", by: "test@acme", quarantineSeq: 2 },
    ]);
    // Onto its own epoch, named: the same request again.
    const named = await post(`/v1/quarantine/${id}/release?wait=0`, { epoch: EPOCH });
    expect(named.json().request).toEqual(first.json().request);
    // A conflicting request while one is pending is refused, saying what is pending.
    const giveUp = errorOf(await post(`/v1/quarantine/${id}/give-up?wait=0`));
    expect(giveUp.message).toMatch(/A release of run .* is already pending \(asked by test@acme\)/);

    await actAsService(id, (seq) => ({
      seq,
      kind: "run.released",
      at: 4_000,
      by: "test@acme",
      epoch: EPOCH,
    }));
    const after = await post(`/v1/quarantine/${id}/release`);
    expect(after.statusCode).toBe(200);
    expect(after.json()).toMatchObject({ state: "unchanged", run: { status: "queued" } });
    expect(after.json().message).toMatch(
      new RegExp(`released by test@acme onto epoch ${EPOCH} at seq 3`),
    );
    const late = errorOf(await post(`/v1/quarantine/${id}/give-up`, { reason: "too late" }));
    expect(late.code).toBe("CONFLICT");
    expect(late.message).toMatch(/it was released .*: cancel it instead/);
    expect(await h.store.readJournal(id)).toHaveLength(3);
  });

  it("give-up: the same, and a run given up cannot be released", async () => {
    const id = await quarantinedRun();
    const asked = await post(`/v1/quarantine/${id}/give-up?wait=0`, { reason: "refunded by hand" });
    expect(asked.statusCode).toBe(202);
    expect((await h.store.pendingQuarantineRequests(100, [id]))[0]).toMatchObject({
      action: "give-up",
      reason: "refunded by hand",
    });
    await actAsService(id, (seq) => ({
      seq,
      kind: "run.failed",
      at: 4_000,
      by: "test@acme",
      error: {
        name: "RewindError",
        code: "GIVEN_UP",
        message: "test@acme gave up: refunded by hand",
      },
    }));
    const again = await post(`/v1/quarantine/${id}/give-up`, { reason: "again" });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ state: "unchanged", run: { status: "failed" } });
    const release = errorOf(await post(`/v1/quarantine/${id}/release`));
    expect(release.code).toBe("CONFLICT");
    expect(release.message).toMatch(/has ended .*: fork it/);
    const show = await h.app.inject({
      method: "GET",
      url: `/v1/quarantine/${id}`,
      headers: h.auth,
    });
    expect(show.json()).toMatchObject({
      quarantined: false,
      history: [
        { seq: 2, kind: "run.quarantined" },
        { seq: 3, kind: "run.failed", by: "test@acme" },
      ],
    });
  });

  it("refuses what does not fit, saying what would", async () => {
    const id = await quarantinedRun();
    const epoch = errorOf(await post(`/v1/quarantine/${id}/release`, { epoch: 99 }));
    expect(epoch).toMatchObject({ code: "INVALID_INPUT", field: "body.epoch" });
    expect(epoch.message).toMatch(/epoch 99 has not been released \(released epochs: 1, 2, 3, 4\)/);
    const reason = errorOf(await post(`/v1/quarantine/${id}/give-up`, { reason: "" }));
    expect(reason).toMatchObject({ code: "INVALID_INPUT", field: "body.reason" });
    const unknown = errorOf(await post(`/v1/quarantine/${id}/release`, { epochs: 1 }));
    expect(unknown).toMatchObject({ code: "INVALID_INPUT", field: "body.epochs" });
    expect(errorOf(await post(`/v1/quarantine/${id}/release`, undefined, h.otherAuth)).code).toBe(
      "NOT_FOUND",
    );
    const open = await startRun(h);
    const notQuarantined = errorOf(await post(`/v1/quarantine/${open}/release`));
    expect(notQuarantined.code).toBe("CONFLICT");
    expect(notQuarantined.message).toMatch(/is queued, not quarantined/);
    expect(await h.store.pendingQuarantineRequests(100, [id, open])).toEqual([]);
  });

  it("epochs: what this build supports, with the namespace's live runs on each", async () => {
    const response = await h.app.inject({ method: "GET", url: "/v1/epochs", headers: h.auth });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.current).toBe(EPOCH);
    const one = body.epochs.find((e: { epoch: number }) => e.epoch === EPOCH);
    expect(one).toMatchObject({
      known: true,
      supported: true,
      current: true,
      released: "2026-12-01",
      environment: { isolatedVm: findEpoch(EPOCH)!.environment.isolatedVm },
    });
    // The older epoch of this runtime's is supported, not current.
    expect(body.epochs.find((e: { epoch: number }) => e.epoch === 1)).toMatchObject({
      supported: true,
      current: false,
    });
    expect(one.sandboxDigest).toMatch(/^sha256:/);
    expect(one.runs.open).toBeGreaterThanOrEqual(3);
    expect(one.runs.byStatus.quarantined).toBeGreaterThanOrEqual(2);
    const other = await h.app.inject({ method: "GET", url: "/v1/epochs", headers: h.otherAuth });
    expect(other.json().epochs[0].runs).toEqual({ open: 0, byStatus: {} });
    // Workers alive that run it: none here until one says so, then one (not an old one).
    expect(one.workers).toBe(0);
    // With none, its open runs wait for one, quarantined ones aside (they wait for an operator).
    expect(one.waiting).toBe(one.runs.open - one.runs.byStatus.quarantined);
    await h.store.workerSeen("api-test-worker", [EPOCH]);
    const seen = await h.app.inject({ method: "GET", url: "/v1/epochs", headers: h.auth });
    const served = seen.json().epochs.find((e: { epoch: number }) => e.epoch === EPOCH);
    expect(served.workers).toBe(1);
    expect(served.waiting).toBe(0);
    await h.store.workerGone("api-test-worker");
  });
});
