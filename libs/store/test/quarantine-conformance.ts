/**
 * The quarantine part of the store's contract (run by conformance.ts on every backend): who holds
 * a token, operators' requests kept apart from signals and consumed by the commit that acts on
 * them, a release that moves the run's epoch in the same commit, and the listing and counts
 * operators read.
 */
import { expect, it } from "vitest";
import type { JournalEntry, RunStartedEntry } from "@rewind/core";
import type { Store } from "../src/index.js";

let counter = 0;

export function quarantineConformance(get: () => Store): void {
  async function quarantinedRun(namespace: string, epoch: number) {
    const store = get();
    counter++;
    const started: RunStartedEntry = {
      seq: 1,
      kind: "run.started",
      at: 1_000,
      runId: `run_quar_${Date.now().toString(36)}_${counter.toString().padStart(4, "0")}`,
      scriptHash: "sha256:script",
      input: null,
      seed: "cd".repeat(32),
      epoch,
      toolset: "shop",
      namespace,
    };
    // Scripts belong to their namespace: a run refers to its own namespace's copy.
    await store.putScript(namespace, {
      hash: "sha256:script",
      entry: "s.ts",
      code: "x",
      sourceMap: "{}",
    });
    await store.createRun({ started, ttlMs: 60_000 });
    const lease = (await store.acquireLease(started.runId, "worker-a", 30_000))!;
    const quarantined: JournalEntry = {
      seq: 2,
      kind: "run.quarantined",
      at: 2_000,
      report: { reason: "divergence", seq: 2, runEpoch: epoch },
    };
    expect(
      await store.commit([{ lease, afterSeq: 1, entries: [quarantined], status: "quarantined" }]),
    ).toEqual(["ok"]);
    await store.releaseLease(lease);
    return started.runId;
  }

  it("leases: a worker that asks only for its epochs never takes a run of another", async () => {
    const store = get();
    const runId = await quarantinedRun("q-epochs", 7);
    const before = (await store.getRun(runId))!;
    expect(await store.acquireLease(runId, "epoch-8-worker", 30_000, { epochs: [8] })).toBe(
      undefined,
    );
    expect(
      await store.acquireLease(runId, "epoch-8-worker", 30_000, { epochs: [8], steal: true }),
    ).toBe(undefined);
    expect((await store.getRun(runId))!.updatedAt).toEqual(before.updatedAt);
    const lease = await store.acquireLease(runId, "epoch-7-worker", 30_000, { epochs: [6, 7] });
    expect(lease).toMatchObject({ owner: "epoch-7-worker", lastSeq: 2 });
  });

  it("quarantine: identifies a token's namespace and label", async () => {
    const store = get();
    const token = await store.createToken("ops-team", "on-call");
    expect(await store.identify(token)).toEqual({ namespace: "ops-team", label: "on-call" });
    expect(await store.identify(`${token}x`)).toBeUndefined();
  });

  it("quarantine: keeps operators' requests apart from signals and cancels", async () => {
    const store = get();
    const runId = await quarantinedRun("q-apart", 1);
    const request = await store.addQuarantineRequest(runId, {
      action: "give-up",
      quarantineSeq: 2,
      by: "on-call@q-apart",
      reason: "the order was refunded by hand",
    });
    // Workers read the inbox for signals and cancels: a request is never theirs to journal.
    expect(await store.pendingInbox(runId)).toEqual([]);
    expect(await store.runsWithPendingInbox(10_000)).not.toContain(runId);
    const signal = await store.addInbox(runId, { kind: "signal", name: "go", payload: 1 });
    expect((await store.pendingInbox(runId)).map((item) => item.id)).toEqual([signal]);
    expect(await store.pendingQuarantineRequests(100, [runId])).toEqual([
      {
        id: request,
        runId,
        action: "give-up",
        quarantineSeq: 2,
        by: "on-call@q-apart",
        reason: "the order was refunded by hand",
      },
    ]);
    expect((await store.pendingQuarantineRequests(10_000)).map((r) => r.id)).toContain(request);
  });

  it("quarantine: a release consumes its request and moves the run's epoch in one fenced commit", async () => {
    const store = get();
    const runId = await quarantinedRun("q-release", 1);
    const first = await store.addQuarantineRequest(runId, {
      action: "release",
      quarantineSeq: 2,
      by: "ops@q-release",
      epoch: 2,
    });
    const second = await store.addQuarantineRequest(runId, {
      action: "release",
      quarantineSeq: 2,
      by: "ops@q-release",
    });
    const lease = (await store.acquireLease(runId, "quarantine-svc", 30_000))!;
    const stale = { ...lease, token: lease.token - 1 };
    const released: JournalEntry = { seq: 3, kind: "run.released", at: 3_000, by: "ops", epoch: 2 };
    const append = {
      afterSeq: 2,
      entries: [released],
      status: "queued" as const,
      inboxConsumed: [
        { id: first, seq: 3 },
        { id: second, seq: 3 },
      ],
    };
    expect(await store.commitRelease({ ...append, lease: stale }, 2)).toBe("lease_lost");
    expect(await store.getRun(runId)).toMatchObject({ epoch: 1, status: "quarantined" });
    expect(await store.commitRelease({ ...append, lease }, 2)).toBe("ok");
    expect(await store.getRun(runId)).toMatchObject({ epoch: 2, status: "queued", lastSeq: 3 });
    expect(await store.pendingQuarantineRequests(100, [runId])).toEqual([]);
    expect((await store.readJournal(runId, 3))[0]).toEqual(released);
    // A request arriving after the release is moot: dismissed without a lease or an entry.
    const late = await store.addQuarantineRequest(runId, {
      action: "release",
      quarantineSeq: 2,
      by: "ops@q-release",
    });
    await store.dismissQuarantineRequests(runId, [late], 3);
    expect(await store.pendingQuarantineRequests(100, [runId])).toEqual([]);
    expect(await store.readJournal(runId)).toHaveLength(3);
  });

  it("quarantine: lists quarantined runs with their latest report, and counts them by epoch", async () => {
    const store = get();
    const a = await quarantinedRun("q-list", 41);
    const b = await quarantinedRun("q-list", 42);
    await store.addQuarantineRequest(b, { action: "release", quarantineSeq: 2, by: "x@q-list" });
    const listed = await store.listQuarantined({ namespace: "q-list" });
    expect(listed.map((q) => q.run.id)).toEqual([b, a]);
    expect(listed[0]).toMatchObject({
      run: { id: b, status: "quarantined", epoch: 42 },
      seq: 2,
      at: 2_000,
      report: { reason: "divergence", seq: 2, runEpoch: 42 },
      pending: [{ runId: b, action: "release", by: "x@q-list" }],
    });
    expect(listed[1]!.pending).toEqual([]);
    expect(await store.listQuarantined({ namespace: "q-list", limit: 1, before: b })).toHaveLength(
      1,
    );
    expect(await store.listQuarantined({ namespace: "nobody" })).toEqual([]);
    const counts = await store.quarantineCounts();
    expect(counts).toContainEqual({ epoch: 41, reason: "divergence", runs: 1 });
    expect(counts).toContainEqual({ epoch: 42, reason: "divergence", runs: 1 });
    expect(await store.openRunsByEpoch("q-list")).toEqual([
      { epoch: 41, status: "quarantined", runs: 1 },
      { epoch: 42, status: "quarantined", runs: 1 },
    ]);
  });
}
