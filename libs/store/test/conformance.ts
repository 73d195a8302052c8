/**
 * The one suite every store backend passes (Postgres, PGlite, and PGlite with S3 blobs run it in
 * the files beside this).
 * It pins the store's contract: fenced appends, group commit, timers, inbox, values stored once,
 * blobs, retention, schema checks.
 */
import { readdir } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallEntry, JournalEntry, RunStartedEntry } from "@rewind/core";
import {
  FIRST_CLAIM_TOKEN,
  checkSchema,
  tokenIdOf,
  type BlobStore,
  type SqlClient,
  type StartLimits,
  type Store,
} from "../src/index.js";
import { codecConformance } from "./codec-conformance.js";
import { quarantineConformance } from "./quarantine-conformance.js";

export interface Backend {
  open(): Promise<{
    store: Store;
    sql: SqlClient;
    /** The store's blob store (the payload codec's tests open stores of their own over it). */
    blobs: BlobStore;
    /** How many blobs the store's blob store holds; rejects if the blob store itself is gone. */
    countBlobs(): Promise<number>;
    close(): Promise<void>;
  }>;
}

/** `countBlobs` for a FolderBlobStore: its blob files, not the two-letter folders they sit in. */
export async function countFolderBlobs(dir: string): Promise<number> {
  const names = await readdir(dir, { recursive: true });
  return names.filter((name) => name.length > 60).length;
}

let counter = 0;
function started(overrides: Partial<RunStartedEntry> = {}): RunStartedEntry {
  counter++;
  return {
    seq: 1,
    kind: "run.started",
    at: 1_000,
    runId: `run_conf_${Date.now().toString(36)}_${counter.toString().padStart(4, "0")}`,
    scriptHash: "sha256:script",
    input: { order: counter },
    seed: "ab".repeat(32),
    epoch: 1,
    toolset: "shop",
    namespace: "default",
    ...overrides,
  };
}
const call = (seq: number, args: unknown = { n: seq }): CallEntry => ({
  seq,
  kind: "call",
  at: 1_000,
  callsite: "s.ts:3:5",
  name: "charge",
  args: args as CallEntry["args"],
  callId: `r/${seq}`,
});

export function conformance(name: string, backend: Backend): void {
  describe(`store conformance: ${name}`, () => {
    let store: Store;
    let sql: SqlClient;
    let blobs: BlobStore;
    let countBlobs: () => Promise<number>;
    let close: () => Promise<void>;

    beforeAll(async () => {
      ({ store, sql, blobs, countBlobs, close } = await backend.open());
      await store.putScript("default", {
        hash: "sha256:script",
        entry: "s.ts",
        code: "x",
        sourceMap: "{}",
      });
    });
    afterAll(async () => close());

    async function newRun(overrides: Partial<RunStartedEntry> = {}) {
      const entry = started(overrides);
      // Scripts belong to their namespace: a run refers to its own namespace's copy.
      if (entry.namespace !== "default")
        await store.putScript(entry.namespace, {
          hash: "sha256:script",
          entry: "s.ts",
          code: "x",
          sourceMap: "{}",
        });
      await store.createRun({ started: entry, ttlMs: 60_000 });
      const lease = (await store.acquireLease(entry.runId, "owner-a", 30_000))!;
      return { entry, lease };
    }

    it("stores scripts once per namespace, by hash: what is stored never changes", async () => {
      await store.putScript("default", {
        hash: "sha256:script",
        entry: "other.ts",
        code: "y",
        sourceMap: "{}",
      });
      expect(await store.getScript("default", "sha256:script")).toEqual({
        hash: "sha256:script",
        entry: "s.ts",
        code: "x",
        sourceMap: "{}",
      });
      expect(await store.getScript("default", "sha256:nope")).toBeUndefined();
    });

    it("keeps each namespace's copy of a script apart: one upload never changes another's", async () => {
      const hash = `sha256:shared_${counter++}`;
      const good = { hash, entry: "good.ts", code: "same", sourceMap: '{"version":3}' };
      const broken = { hash, entry: "evil.ts", code: "same", sourceMap: "broken" };
      // The other tenant uploads the same code first, with a broken map.
      await store.putScript("tenant-b", broken);
      expect(await store.getScript("tenant-a", hash)).toBeUndefined(); // a hash grants nothing
      await store.putScript("tenant-a", good);
      expect(await store.getScript("tenant-a", hash)).toEqual(good);
      expect(await store.getScript("tenant-b", hash)).toEqual(broken);
      // A run refers to its own namespace's copy; one in a namespace without it is refused.
      await newRun({ namespace: "tenant-a", scriptHash: hash });
      await expect(
        store.createRun({
          started: started({ namespace: "tenant-c", scriptHash: hash }),
          ttlMs: 60_000,
        }),
      ).rejects.toThrow();
    });

    it("creates a run with its run.started entry and reads the journal back byte for byte", async () => {
      const entry = started();
      await store.createRun({ started: entry, ttlMs: 60_000 });
      expect((await store.getRun(entry.runId))?.status).toBe("queued");
      const lease = (await store.acquireLease(entry.runId, "owner-a", 30_000))!;
      // A worker took it: it runs.
      expect(await store.getRun(entry.runId)).toMatchObject({
        id: entry.runId,
        status: "running",
        lastSeq: 1,
        toolset: "shop",
        epoch: 1,
      });
      const entries: JournalEntry[] = [
        call(2),
        // Journaled values are in canonical key order (the engine puts them so).
        {
          seq: 3,
          kind: "call.result",
          at: 1_500,
          callSeq: 2,
          result: { id: "ch_1", nested: { a: [1, 2], z: 1 } },
        },
        { seq: 4, kind: "output", at: 1_500, callsite: "s.ts:4:1", stream: "stdout", text: "hi\n" },
        { seq: 5, kind: "run.completed", at: 1_500, result: { ok: true } },
      ];
      expect(await store.commit([{ lease, afterSeq: 1, entries, status: "completed" }])).toEqual([
        "ok",
      ]);
      const journal = await store.readJournal(entry.runId);
      expect(JSON.stringify(journal)).toBe(JSON.stringify([entry, ...entries]));
      const run = await store.getRun(entry.runId);
      expect(run).toMatchObject({ status: "completed", lastSeq: 5, result: { ok: true } });
      expect(run!.endedAt).toBeInstanceOf(Date);
      expect(run!.expiresAt!.getTime()).toBeGreaterThan(run!.endedAt!.getTime());
      expect(await store.readJournal(entry.runId, 4)).toHaveLength(2);
      // A page: at most `limit` entries from the seq asked for, in seq order.
      const page = await store.readJournal(entry.runId, 2, 2);
      expect(page.map((e) => e.seq)).toEqual([2, 3]);
      expect(JSON.stringify(page)).toBe(JSON.stringify(entries.slice(0, 2)));
      expect(await store.readJournal(entry.runId, 5, 10)).toHaveLength(1);
    });

    it("answers a follower with the run's status and its entries from a seq, values read", async () => {
      // A value with a row of its own (not in the blob store: another test counts its blobs).
      const big = { follower: true, text: "y".repeat(4 * 1024) }; // keys in canonical order
      const { entry, lease } = await newRun({ input: big });
      expect(await store.readJournalFollowing(entry.runId, 1)).toEqual({
        status: "running",
        entries: [entry],
      });
      // Nothing past the end yet: the status alone.
      expect(await store.readJournalFollowing(entry.runId, 2)).toEqual({
        status: "running",
        entries: [],
      });
      const ended = { seq: 3, kind: "run.completed", at: 1_500, result: big } as const;
      expect(
        await store.commit([
          { lease, afterSeq: 1, entries: [call(2), ended], status: "completed" },
        ]),
      ).toEqual(["ok"]);
      const now = await store.readJournalFollowing(entry.runId, 2);
      expect(JSON.stringify(now)).toBe(
        JSON.stringify({ status: "completed", entries: [call(2), ended] }),
      );
      expect(await store.readJournalFollowing("run_conf_none", 1)).toBeUndefined();
    });

    // Both ways an append commits: rw_commit, and the one-INSERT plain step (runRowUnchanged).
    for (const runRowUnchanged of [false, true])
      it(`refuses an append from a stale lease or after the wrong seq, writing nothing of it${runRowUnchanged ? " (plain step)" : ""}`, async () => {
        const { entry, lease } = await newRun();
        const newer = await store.acquireLease(entry.runId, "owner-b", 30_000, { steal: true });
        expect(newer!.token).toBe(lease.token + 1);
        expect(
          await store.commit([
            { lease, afterSeq: 1, entries: [call(2)], status: "running", runRowUnchanged },
          ]),
        ).toEqual(["lease_lost"]);
        expect(
          await store.commit([
            { lease: newer!, afterSeq: 3, entries: [call(4)], status: "running", runRowUnchanged },
          ]),
        ).toEqual(["lease_lost"]);
        expect(await store.readJournal(entry.runId)).toHaveLength(1);
        expect(
          await store.commit([
            { lease: newer!, afterSeq: 1, entries: [call(2)], status: "running", runRowUnchanged },
          ]),
        ).toEqual(["ok"]);
        // The same append twice (a redelivered activation) is refused the second time.
        expect(
          await store.commit([
            { lease: newer!, afterSeq: 1, entries: [call(2)], status: "running", runRowUnchanged },
          ]),
        ).toEqual(["lease_lost"]);
        expect(await store.readJournal(entry.runId)).toHaveLength(2);
      });

    it("commits a plain step in one INSERT, and refuses it from a stale lease", async () => {
      const { entry, lease } = await newRun();
      await store.commit([{ lease, afterSeq: 1, entries: [call(2)], status: "running" }]);
      const result = {
        seq: 3,
        kind: "call.result",
        at: 2_000,
        callSeq: 2,
        result: { id: "ch_1" },
      } as JournalEntry;
      const output = {
        seq: 5,
        kind: "output",
        at: 2_000,
        callsite: "s.ts:4:1",
        stream: "stdout",
        text: "hi\n",
      } as JournalEntry;
      const step = {
        lease,
        afterSeq: 2,
        entries: [result, call(4), output],
        status: "running" as const,
        runRowUnchanged: true,
      };
      expect(await store.commit([step])).toEqual(["ok"]);
      expect(await store.commit([step])).toEqual(["lease_lost"]); // redelivered: refused
      expect(JSON.stringify((await store.readJournal(entry.runId)).slice(2))).toBe(
        JSON.stringify([result, call(4), output]),
      );
      expect((await store.getRun(entry.runId))?.lastSeq).toBe(5);
    });

    it("commits many runs' plain steps in one statement, each fenced on its own", async () => {
      const runs = await Promise.all([newRun(), newRun(), newRun()]);
      for (const { lease } of runs)
        await store.commit([{ lease, afterSeq: 1, entries: [call(2)], status: "running" }]);
      const result = (seq: number) =>
        ({
          seq,
          kind: "call.result",
          at: 2,
          callSeq: seq - 1,
          result: { ok: seq },
        }) as JournalEntry;
      const step = (lease: (typeof runs)[number]["lease"]) => ({
        lease,
        afterSeq: 2,
        entries: [result(3), call(4)],
        status: "running" as const,
        runRowUnchanged: true,
      });
      const stale = { ...runs[1].lease, token: runs[1].lease.token - 1 };
      const timer = {
        seq: 3,
        kind: "timer.set",
        at: 2,
        due: 99,
        callsite: "s.ts:1:1",
      } as JournalEntry;
      expect(
        await store.commit([
          step(runs[0].lease),
          step(stale),
          { ...step(runs[2].lease), entries: [timer] }, // not plain: through rw_commit beside it
        ]),
      ).toEqual(["ok", "lease_lost", "ok"]);
      expect((await store.readJournal(runs[0].entry.runId)).map((e) => e.seq)).toEqual([
        1, 2, 3, 4,
      ]);
      expect(await store.readJournal(runs[1].entry.runId)).toHaveLength(2);
      expect((await store.readJournal(runs[2].entry.runId)).at(-1)).toMatchObject({
        kind: "timer.set",
      });
      // Two appends after the same seq in one batch: the key refuses the second, the rest go on.
      const again = await newRun();
      await store.commit([
        { lease: again.lease, afterSeq: 1, entries: [call(2)], status: "running" },
      ]);
      expect(
        await store.commit([step(again.lease), step(again.lease), step(runs[1].lease)]),
      ).toEqual(["ok", "lease_lost", "ok"]);
    });

    it("hands the lease back in the commit that ends the run, when asked to", async () => {
      const { entry, lease } = await newRun();
      const end = { seq: 2, kind: "run.completed", at: 1, result: 7 } as JournalEntry;
      expect(
        await store.commit([
          { lease, afterSeq: 1, entries: [end], status: "completed", releaseLease: true },
        ]),
      ).toEqual(["ok"]);
      expect(await store.routes([entry.runId])).toEqual([
        { runId: entry.runId, epoch: 1, leases: 1 },
      ]);
      const row = await sql.query<{ lease_owner: string | null }>(
        "SELECT lease_owner FROM rw_runs WHERE id = $1",
        [entry.runId],
      );
      expect(row[0]!.lease_owner).toBeNull();
      expect(await store.getRun(entry.runId)).toMatchObject({ status: "completed", result: 7 });
    });

    it("takes a new run's lease in its first commit, only while no one ever took it", async () => {
      const claimOf = (entry: RunStartedEntry, owner: string, ran: RunStartedEntry = entry) => ({
        lease: {
          runId: entry.runId,
          owner,
          token: FIRST_CLAIM_TOKEN,
          lastSeq: 1,
          attempts: 1,
          namespace: entry.namespace,
        },
        afterSeq: 1,
        entries: [call(2)],
        status: "running" as const,
        claim: { started: ran, ttlMs: 30_000 },
      });
      const leaseOf = async (runId: string) =>
        (
          await sql.query<{ lease_owner: string | null; lease_token: number; status: string }>(
            "SELECT lease_owner, lease_token::int, status FROM rw_runs WHERE id = $1",
            [runId],
          )
        )[0]!;
      const fresh = async (input: RunStartedEntry["input"] = { n: 1 }) => {
        const entry = started({ input });
        return { entry, outcome: await store.createRun({ started: entry, ttlMs: 60_000 }) };
      };

      // Never taken: the claim takes the lease with the first token, and the entries go in.
      const { entry: taken, outcome } = await fresh();
      expect(outcome).toEqual({ created: true, inClear: true });
      expect(await store.commit([claimOf(taken, "claimer")])).toEqual(["ok"]);
      expect(await leaseOf(taken.runId)).toEqual({
        lease_owner: "claimer",
        lease_token: FIRST_CLAIM_TOKEN,
        status: "running",
      });
      expect(await store.readJournal(taken.runId)).toHaveLength(2);
      // Taken once, never claimed again, by anyone.
      expect(await store.commit([{ ...claimOf(taken, "other"), afterSeq: 2 }])).toEqual([
        "lease_lost",
      ]);
      expect((await leaseOf(taken.runId)).lease_owner).toBe("claimer");

      // Leased the usual way first, or a signal waiting, or run in another epoch, or not the
      // start stored (a ring forged in Redis): refused, nothing written.
      const leased = (await fresh()).entry;
      const lease = (await store.acquireLease(leased.runId, "owner-a", 30_000))!;
      const signalled = (await fresh()).entry;
      await store.addInbox(signalled.runId, { kind: "signal", name: "go" });
      const moved = (await fresh()).entry;
      const forged = (await fresh()).entry;
      expect(
        await store.commit([
          claimOf(leased, "claimer"),
          claimOf(signalled, "claimer"),
          claimOf(moved, "claimer", { ...moved, epoch: 2 }),
          claimOf(forged, "claimer", { ...forged, input: { n: 666 } }),
        ]),
      ).toEqual(["lease_lost", "lease_lost", "lease_lost", "lease_lost"]);
      for (const { runId } of [leased, signalled, moved, forged])
        expect(await store.readJournal(runId)).toHaveLength(1);
      expect(await leaseOf(leased.runId)).toMatchObject({
        lease_owner: "owner-a",
        lease_token: lease.token,
      });
      expect(await leaseOf(signalled.runId)).toMatchObject({ lease_owner: null, status: "queued" });
      expect(await leaseOf(moved.runId)).toMatchObject({ lease_owner: null, status: "queued" });
      expect(await leaseOf(forged.runId)).toMatchObject({ lease_owner: null, status: "queued" });

      // An input stored apart from its row (not in the blob store: the suite counts those) is not
      // in the clear: its start stays off the ring.
      expect((await fresh({ text: "x".repeat(4 * 1024) })).outcome).toEqual({
        created: true,
        inClear: false,
      });
    });

    it("never appends twice after the same seq, even within one group commit", async () => {
      const { entry, lease } = await newRun();
      const outcomes = await store.commit([
        { lease, afterSeq: 1, entries: [call(2, { first: true })], status: "running" },
        { lease, afterSeq: 1, entries: [call(2, { second: true })], status: "running" },
      ]);
      expect(outcomes).toEqual(["ok", "lease_lost"]);
      expect(
        (await store.readJournal(entry.runId)).map((e) => (e as { args?: unknown }).args),
      ).toEqual([undefined, { first: true }]);
      expect((await store.getRun(entry.runId))?.lastSeq).toBe(2);
    });

    it("commits many runs at once, each fenced on its own", async () => {
      const a = await newRun();
      const b = await newRun();
      const stale = { ...b.lease, token: b.lease.token - 1 };
      const outcomes = await store.commit([
        { lease: a.lease, afterSeq: 1, entries: [call(2)], status: "running" },
        { lease: stale, afterSeq: 1, entries: [call(2)], status: "running" },
      ]);
      expect(outcomes).toEqual(["ok", "lease_lost"]);
      expect(await store.readJournal(a.entry.runId)).toHaveLength(2);
      expect(await store.readJournal(b.entry.runId)).toHaveLength(1);
    });

    it("leases: one owner at a time; the same owner again gets a new token", async () => {
      const entry = started();
      await store.createRun({ started: entry, ttlMs: 60_000 });
      const first = await store.acquireLease(entry.runId, "w1", 30_000);
      expect(first).toMatchObject({ owner: "w1", lastSeq: 1 });
      expect(await store.acquireLease(entry.runId, "w2", 30_000)).toBeUndefined();
      const again = await store.acquireLease(entry.runId, "w1", 30_000);
      expect(again!.token).toBeGreaterThan(first!.token);
      await store.releaseLease(again!);
      expect(await store.acquireLease(entry.runId, "w2", 30_000)).toMatchObject({ owner: "w2" });
      const expiring = started();
      await store.createRun({ started: expiring, ttlMs: 60_000 });
      await store.acquireLease(expiring.runId, "w1", 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await store.acquireLease(expiring.runId, "w2", 30_000)).toMatchObject({ owner: "w2" });
    });

    it("counts cold loads as attempts until the run journals progress or is handed back", async () => {
      const entry = started();
      await store.createRun({ started: entry, ttlMs: 60_000 });
      expect((await store.acquireLease(entry.runId, "w1", 30_000))?.attempts).toBe(1);
      expect((await store.acquireLease(entry.runId, "w2", 30_000, { steal: true }))?.attempts).toBe(
        2,
      );
      const third = (await store.acquireLease(entry.runId, "w3", 30_000, { steal: true }))!;
      expect(third.attempts).toBe(3);
      await store.commit([{ lease: third, afterSeq: 1, entries: [call(2)], status: "running" }]);
      const fourth = (await store.acquireLease(entry.runId, "w4", 30_000, { steal: true }))!;
      expect(fourth.attempts).toBe(1); // progress reset the count
      await store.clearAttempts(fourth);
      const fifth = (await store.acquireLease(entry.runId, "w5", 30_000, { steal: true }))!;
      expect(fifth.attempts).toBe(1);
      await store.releaseLease(fifth);
      expect((await store.acquireLease(entry.runId, "w6", 30_000))?.attempts).toBe(1);
      // A plain step (journal rows only, the run row untouched) is progress too.
      const seventh = (await store.acquireLease(entry.runId, "w7", 30_000, { steal: true }))!;
      expect(seventh.attempts).toBe(2);
      const plain = { lease: seventh, afterSeq: 2, entries: [call(3)], status: "running" as const };
      expect(await store.commit([{ ...plain, runRowUnchanged: true }])).toEqual(["ok"]);
      expect((await store.acquireLease(entry.runId, "w8", 30_000, { steal: true }))?.attempts).toBe(
        1,
      );
    });

    it("counts sandbox deaths at the seq they happened, from 1 again past it", async () => {
      const entry = started();
      await store.createRun({ started: entry, ttlMs: 60_000 });
      const first = (await store.loadRun(entry.runId, "w1", 30_000))!;
      expect(first.lease.deaths).toEqual({ count: 0, seq: 0, cause: null });
      expect(await store.recordDeath(first.lease, 1, "abort one")).toBe(1);
      expect(await store.recordDeath(first.lease, 1, "abort two")).toBe(2);
      // Handed back and loaded again (what a re-run tool call does): no progress, the count stays.
      await store.releaseLease(first.lease);
      const second = (await store.loadRun(entry.runId, "w2", 30_000))!;
      expect(second.lease.deaths).toEqual({ count: 2, seq: 1, cause: "abort two" });
      expect(await store.recordDeath(second.lease, 1, "abort three")).toBe(3);
      // A stale owner charges nothing.
      expect(await store.recordDeath(first.lease, 1, "stale")).toBe(0);
      await store.commit([
        { lease: second.lease, afterSeq: 1, entries: [call(2)], status: "running" },
      ]);
      // Past the seq of the last death: progress, the next death is the first again.
      expect(await store.recordDeath(second.lease, 2, "abort four")).toBe(1);
      const third = (await store.loadRun(entry.runId, "w2", 30_000))!;
      expect(third.lease.deaths).toEqual({ count: 1, seq: 2, cause: "abort four" });
    });

    it("keeps a timer due past the last date (an epoch-1 journal's 1e308) without failing", async () => {
      const { entry, lease } = await newRun();
      const far = { seq: 2, kind: "timer.set", at: 1_000, due: 1e308 } as const;
      expect(
        await store.commit([{ lease, afterSeq: 1, entries: [far], status: "waiting" }]),
      ).toEqual(["ok"]);
      expect((await store.readJournal(entry.runId))[1]).toEqual(far);
      const mine = async (now: number) =>
        (await store.dueTimers(now, 100)).filter((t) => t.runId === entry.runId);
      expect(await mine(Date.now() + 1e12)).toEqual([]);
      expect(await mine(8.64e15)).toEqual([{ runId: entry.runId, timerSeq: 2, dueAt: 8.64e15 }]);
    });

    for (const [what, nul] of [
      ["U+0000", "a\u0000b"],
      ["a lone surrogate", "a\ud800b\udc00"],
    ] as const)
      it(`keeps ${what} wherever a script can put one: output, a call's name, an error, a callsite`, async () => {
        // Postgres holds neither in jsonb: such a commit failed on every attempt, and the run was
        // retried forever (issue 17, `console.log("a\0b")`).
        const { entry, lease } = await newRun();
        // A plain step (one INSERT), then the run's end (rw_commit, the run's row too).
        const plain: JournalEntry[] = [
          {
            seq: 2,
            kind: "output",
            at: 1_000,
            callsite: `${nul}.ts:1:1`,
            stream: "stdout",
            text: nul,
          },
          {
            seq: 3,
            kind: "call",
            at: 1_000,
            callsite: "s.ts:3:5",
            name: nul,
            args: { [nul]: nul },
            callId: "r/3",
          },
        ];
        const error = { name: "Error", message: nul, code: "SCRIPT_ERROR", stack: `Error: ${nul}` };
        const ended: JournalEntry[] = [
          {
            seq: 4,
            kind: "call.error",
            at: 1_000,
            callSeq: 3,
            error: { name: "Error", message: nul },
          },
          {
            seq: 5,
            kind: "run.quarantined",
            at: 1_000,
            report: { reason: "divergence", ours: nul },
          },
          { seq: 6, kind: "run.failed", at: 1_000, error },
        ];
        expect(
          await store.commit([{ lease, afterSeq: 1, entries: plain, status: "running" }]),
        ).toEqual(["ok"]);
        expect(
          await store.commit([{ lease, afterSeq: 3, entries: ended, status: "failed" }]),
        ).toEqual(["ok"]);
        expect(await store.readJournal(entry.runId)).toEqual([entry, ...plain, ...ended]);
        expect((await store.getRun(entry.runId))?.error).toEqual(error);
        // What SQL reads from a body stays in the clear beside the text.
        const reasons = await sql.query<{ reason: string }>(
          "SELECT body->>'reason' AS reason FROM rw_journal WHERE run_id = $1 AND seq = 5",
          [entry.runId],
        );
        expect(reasons).toEqual([{ reason: "divergence" }]);
      });

    it("keeps timers as rows until they fire, are cancelled, or the run ends", async () => {
      const { entry, lease } = await newRun();
      await store.commit([
        {
          lease,
          afterSeq: 1,
          entries: [
            { seq: 2, kind: "timer.set", at: 1_000, due: 5_000 },
            { seq: 3, kind: "timer.set", at: 1_000, due: 9_000 },
          ],
          status: "waiting",
        },
      ]);
      const mine = async (now: number) =>
        (await store.dueTimers(now, 100)).filter((t) => t.runId === entry.runId);
      expect(await mine(4_999)).toEqual([]);
      expect(await mine(9_000)).toEqual([
        { runId: entry.runId, timerSeq: 2, dueAt: 5_000 },
        { runId: entry.runId, timerSeq: 3, dueAt: 9_000 },
      ]);
      await store.commit([
        {
          lease,
          afterSeq: 3,
          entries: [{ seq: 4, kind: "timer.fired", at: 5_000, timerSeq: 2 }],
          status: "waiting",
        },
      ]);
      expect((await mine(9_000)).map((t) => t.timerSeq)).toEqual([3]);
      await store.commit([
        {
          lease,
          afterSeq: 4,
          entries: [{ seq: 5, kind: "run.cancelled", at: 5_000 }],
          status: "cancelled",
        },
      ]);
      expect(await mine(9_000)).toEqual([]);
    });

    it("holds outside events in the inbox until the owner journals them", async () => {
      const { entry, lease } = await newRun();
      const first = await store.addInbox(entry.runId, {
        kind: "signal",
        name: "approval",
        payload: { approved: true },
      });
      const second = await store.addInbox(entry.runId, { kind: "cancel" });
      expect(await store.pendingInbox(entry.runId)).toEqual([
        {
          id: first,
          runId: entry.runId,
          kind: "signal",
          name: "approval",
          payload: { approved: true },
        },
        { id: second, runId: entry.runId, kind: "cancel", name: null, payload: null },
      ]);
      await store.commit([
        {
          lease,
          afterSeq: 1,
          entries: [
            { seq: 2, kind: "signal", at: 2_000, name: "approval", payload: { approved: true } },
          ],
          status: "running",
          inboxConsumed: [{ id: first, seq: 2 }],
        },
      ]);
      expect((await store.pendingInbox(entry.runId)).map((i) => i.id)).toEqual([second]);
      expect(await store.runsWithPendingInbox(1000)).toContain(entry.runId);
    });

    it("stores identical values once, and values over 64 KiB in the blob store", async () => {
      const big = { text: "x".repeat(70 * 1024) };
      const a = await newRun({ input: big });
      const b = await newRun({ input: big });
      const rows = await sql.query<{ n: string }>(
        "SELECT count(*) AS n FROM rw_values WHERE blob_key IS NOT NULL",
      );
      expect(Number(rows[0]!.n)).toBe(1);
      expect(await countBlobs()).toBe(1);
      expect((await store.readJournal(a.entry.runId))[0]).toEqual(a.entry);
      expect((await store.readJournal(b.entry.runId))[0]).toEqual(b.entry);
    });

    it("keeps small values in their entry and stores a larger one once, by reference", async () => {
      const values = async () =>
        Number((await sql.query<{ n: string }>("SELECT count(*) AS n FROM rw_values"))[0]!.n);
      const before = await values();
      const { entry, lease } = await newRun({ input: { small: true } });
      const large = { text: "z".repeat(4 * 1024), run: entry.runId };
      await store.commit([
        { lease, afterSeq: 1, entries: [call(2, { n: 1 }), call(3, large)], status: "running" },
      ]);
      expect(await values()).toBe(before + 1); // only the 4 KiB argument has a row of its own
      const journal = await store.readJournal(entry.runId);
      expect(
        journal.map((e) => (e as { args?: unknown }).args ?? (e as { input?: unknown }).input),
      ).toEqual([{ small: true }, { n: 1 }, large]);
    });

    it("lists runs by namespace and status, newest first, with paging", async () => {
      const ns = `ns_${counter}`;
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await newRun({ namespace: ns })).entry.runId);
      const all = await store.listRuns({ namespace: ns });
      expect(all.map((r) => r.id)).toEqual([...ids].reverse());
      expect(
        (await store.listRuns({ namespace: ns, limit: 1, before: ids[2] })).map((r) => r.id),
      ).toEqual([ids[1]]);
      expect(await store.listRuns({ namespace: ns, status: "completed" })).toEqual([]);
      expect((await store.openRuns(1000)).map((r) => r.id)).toEqual(expect.arrayContaining(ids));
    });

    it("refuses a start over its namespace's limits, storing nothing and answering the load", async () => {
      const ns = `limits_${counter}`;
      const big = { blob: "x".repeat(70 * 1024) }; // kept apart from the row: another path
      await newRun({ namespace: ns }); // open: it counts in flight
      const start = (limits: StartLimits, input?: RunStartedEntry["input"]) => {
        const entry = started({ namespace: ns, ...(input === undefined ? {} : { input }) });
        return store.createRun({ started: entry, ttlMs: 60_000, limits }).then((outcome) => ({
          outcome,
          entry,
        }));
      };
      // One open run: a limit of one run in flight refuses, on every insert path; so does a
      // start rate of 0 a second (its count depends on the clock, so no real rate is tried).
      for (const limits of [
        { runsInFlight: 1, startsPerSecond: 100 },
        { runsInFlight: 100, startsPerSecond: 0 },
      ]) {
        const refused = {
          created: false,
          refused: { inFlight: 1, lastSecond: expect.any(Number) },
        };
        for (const input of [undefined, big]) {
          const { outcome, entry } = await start(limits, input);
          expect(outcome).toEqual(refused);
          expect(await store.getRun(entry.runId)).toBeUndefined();
        }
        const keyed = started({ namespace: ns });
        expect(
          await store.createRun({
            started: keyed,
            ttlMs: 60_000,
            limits,
            idempotency: { key: `k-${counter}`, digest: "d" },
          }),
        ).toEqual(refused);
        expect(await store.getRun(keyed.runId)).toBeUndefined();
      }
      // Under them, it goes in.
      const { outcome, entry } = await start({ runsInFlight: 2, startsPerSecond: 100 });
      expect(outcome).toEqual({ created: true, inClear: true });
      expect((await store.getRun(entry.runId))?.status).toBe("queued");
    });

    it("counts the starts it admits against the rate, on every insert path, not those it refuses", async () => {
      const ns = `rate_${counter}`;
      const limits = { runsInFlight: 1_000, startsPerSecond: 3 };
      const big = { blob: "x".repeat(70 * 1024) }; // kept apart from the row: another path
      for (const namespace of [ns, `${ns}_b`])
        await store.putScript(namespace, {
          hash: "sha256:script",
          entry: "s.ts",
          code: "x",
          sourceMap: "{}",
        });
      const start = (input?: RunStartedEntry["input"], key?: string) =>
        store.createRun({
          started: started({ namespace: ns, ...(input === undefined ? {} : { input }) }),
          ttlMs: 60_000,
          limits,
          ...(key === undefined ? {} : { idempotency: { key, digest: "d" } }),
        });
      // Within a few milliseconds, so within a third of a second: a second boundary between
      // them still leaves the earlier starts counted whole (the earlier bucket is weighted by
      // what the last second covers of it, rounded up).
      for (const input of [undefined, big]) expect((await start(input)).created).toBe(true);
      expect((await start(undefined, `k-${counter}`)).created).toBe(true);
      const refused = { created: false, refused: { inFlight: expect.any(Number), lastSecond: 3 } };
      for (const input of [undefined, big]) expect(await start(input)).toEqual(refused);
      expect(await start(undefined, `k2-${counter}`)).toEqual(refused);
      // Refused starts counted nothing; another namespace's count is its own.
      expect(await start()).toEqual(refused);
      expect(
        (
          await store.createRun({
            started: started({ namespace: `${ns}_b` }),
            ttlMs: 60_000,
            limits,
          })
        ).created,
      ).toBe(true);
    });

    it("counts open runs only when the last count and the second's starts could reach their limit", async () => {
      const ns = `in_flight_${counter}`;
      const start = (limits: StartLimits) =>
        store.createRun({ started: started({ namespace: ns }), ttlMs: 60_000, limits });
      await newRun({ namespace: ns }); // open: it counts in flight
      // Far below the limit: counted by the first start (whatever the start rate allows), then
      // taken as read for half a second plus the runs started since (all of the last second).
      // A start rate of 0 refuses, and its answer shows the runs in flight as last counted: 1,
      // though 4 are open now.
      expect(await start({ runsInFlight: 1_000, startsPerSecond: 100_000 })).toEqual({
        created: true,
        inClear: true,
      });
      await newRun({ namespace: ns });
      await newRun({ namespace: ns });
      expect(await start({ runsInFlight: 1_000, startsPerSecond: 0 })).toEqual({
        created: false,
        refused: { inFlight: 1, lastSecond: expect.any(Number) },
      });
      // Near it, every start counts, exactly: a limit of 5 takes one more and refuses the next.
      const near = { runsInFlight: 5, startsPerSecond: 100 };
      expect(await start(near)).toEqual({ created: true, inClear: true });
      expect(await start(near)).toEqual({
        created: false,
        refused: { inFlight: 5, lastSecond: expect.any(Number) },
      });
      // A count half a second old bounds nothing: the next start counts again (6 open now).
      await newRun({ namespace: ns });
      await new Promise((resolve) => setTimeout(resolve, 550));
      expect(await start({ runsInFlight: 1_000, startsPerSecond: 0 })).toEqual({
        created: false,
        refused: { inFlight: 6, lastSecond: expect.any(Number) },
      });
    });

    it("leaves a run no worker has taken yet to its first ring for a while", async () => {
      const entry = started();
      await store.createRun({ started: entry, ttlMs: 60_000 });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const after = (unstartedMs: number) => ({ idleMs: 0, unstartedMs });
      expect(await store.strandedRuns(10_000, after(60_000))).not.toContain(entry.runId);
      expect(await store.strandedRuns(10_000, after(0))).toContain(entry.runId);
    });

    it("routes a run to its live lease holder, and finds runs no live owner is moving", async () => {
      const { entry, lease } = await newRun({ epoch: 7 });
      // With how many times its lease was taken: a ring of a later generation is a new job.
      expect(await store.routes([entry.runId])).toEqual([
        { runId: entry.runId, epoch: 7, holder: "owner-a", leases: 1 },
      ]);
      expect((await store.getRun(entry.runId))!.holder).toBe("owner-a");
      expect(await store.strandedRuns(10_000, { idleMs: 0, unstartedMs: 0 })).not.toContain(
        entry.runId,
      );
      // Its owner dies: the lease runs out, and the run is stranded (routed to anyone).
      const short = (await store.acquireLease(entry.runId, "owner-a", 1))!;
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await store.routes([entry.runId])).toEqual([
        { runId: entry.runId, epoch: 7, leases: 2 },
      ]);
      expect((await store.getRun(entry.runId))!.holder).toBeUndefined();
      expect(await store.strandedRuns(10_000, { idleMs: 0, unstartedMs: 0 })).toContain(
        entry.runId,
      );
      // Handed back cleanly: still stranded (someone must pick it up); once ended, never.
      const again = (await store.acquireLease(entry.runId, "owner-b", 30_000))!;
      expect(again.token).toBeGreaterThan(short.token);
      expect(lease.token).toBeLessThan(short.token);
      await store.releaseLease(again);
      expect(await store.strandedRuns(10_000, { idleMs: 0, unstartedMs: 0 })).toContain(
        entry.runId,
      );
      const last = (await store.acquireLease(entry.runId, "owner-b", 30_000))!;
      await store.commit([
        {
          lease: last,
          afterSeq: 1,
          entries: [{ seq: 2, kind: "run.completed", at: 1, result: null }],
          status: "completed",
        },
      ]);
      expect(await store.strandedRuns(10_000, { idleMs: 0, unstartedMs: 0 })).not.toContain(
        entry.runId,
      );
      expect(await store.routes(["run_that_does_not_exist"])).toEqual([]);
    });

    it("knows the workers seen lately and their epochs; a worker gone is gone", async () => {
      const a = `w-a-${counter++}`;
      const b = `w-b-${counter++}`;
      await store.workerSeen(a, [1]);
      await store.workerSeen(b, [1, 2]);
      await store.workerSeen(a, [1, 3]); // seen again: its row, updated
      const live = (await store.liveWorkers(60_000)).filter((w) => [a, b].includes(w.owner));
      expect(live.map((w) => [w.owner, w.epochs])).toEqual([
        [a, [1, 3]],
        [b, [1, 2]],
      ]);
      expect(live[0]!.seenAt.getTime()).toBeGreaterThanOrEqual(live[0]!.startedAt.getTime());
      await store.workerGone(b);
      const after = (await store.liveWorkers(60_000)).map((w) => w.owner);
      expect(after).toContain(a);
      expect(after).not.toContain(b);
      // Not seen within the window: not live.
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect((await store.liveWorkers(10)).map((w) => w.owner)).not.toContain(a);
    });

    it("keeps the toolsets workers publish; the latest description of a name wins", async () => {
      const name = `shop_${Date.now().toString(36)}_${++counter}`;
      expect(await store.getToolset(name)).toBeUndefined();
      const charge = { name: "charge", unsafeToRepeat: false, retries: 0 };
      const sendEmail = { name: "sendEmail", unsafeToRepeat: true, timeoutMs: 30_000, retries: 3 };
      await store.publishToolsets(
        [
          { name, tools: [charge, sendEmail] },
          { name: `${name}_empty`, tools: [] },
        ],
        "worker-a",
      );
      const first = (await store.getToolset(name))!;
      expect(first).toEqual({
        name,
        tools: [charge, sendEmail],
        publishedBy: "worker-a",
        publishedAt: expect.any(Date),
      });
      expect(await store.getToolset(`${name}_empty`)).toMatchObject({ tools: [] });

      // A new deployment's workers: sendEmail is no longer unsafe to repeat, charge is gone.
      const safer = { name: "sendEmail", unsafeToRepeat: false, retries: 1 };
      await store.publishToolsets([{ name, tools: [safer] }], "worker-b");
      const second = (await store.getToolset(name))!;
      expect(second).toMatchObject({ tools: [safer], publishedBy: "worker-b" });
      expect(second.publishedAt.getTime()).toBeGreaterThanOrEqual(first.publishedAt.getTime());

      // A malformed description is refused whole, saying what is wrong; nothing is written.
      await expect(
        store.publishToolsets(
          [
            { name: `${name}_other`, tools: [charge] },
            { name, tools: [charge, charge] },
          ],
          "worker-c",
        ),
      ).rejects.toMatchObject({ code: "INVALID_INPUT", message: expect.stringContaining("twice") });
      await expect(store.publishToolsets([{ name: "", tools: [] }], "w")).rejects.toThrow(
        /has no name/,
      );
      await expect(
        store.publishToolsets([{ name, tools: [{ ...charge, retries: -1 }] }], "w"),
      ).rejects.toThrow(/retries -1/);
      expect(await store.getToolset(`${name}_other`)).toBeUndefined();
      expect((await store.getToolset(name))!.publishedBy).toBe("worker-b");
      await store.publishToolsets([], "w"); // nothing to publish: nothing happens
    });

    it("loads a run in one call: its lease, record, journal and pending inbox", async () => {
      const big = { text: "v".repeat(5 * 1024), n: counter };
      const { entry, lease } = await newRun({ input: big, epoch: 3 });
      await store.commit([{ lease, afterSeq: 1, entries: [call(2, big)], status: "running" }]);
      const signal = await store.addInbox(entry.runId, {
        kind: "signal",
        name: "go",
        payload: big,
      });
      expect(await store.loadRun(entry.runId, "owner-b", 30_000)).toBeUndefined(); // held
      expect(await store.loadRun(entry.runId, "owner-a", 30_000, { epochs: [1] })).toBeUndefined();
      const loaded = (await store.loadRun(entry.runId, "owner-a", 30_000, { epochs: [3] }))!;
      expect(loaded.lease).toEqual({
        runId: entry.runId,
        owner: "owner-a",
        token: lease.token + 1,
        lastSeq: 2,
        attempts: 1, // the commit was progress: this load is the first attempt since
        namespace: "default",
        deaths: { count: 0, seq: 0, cause: null },
      });
      expect(loaded.record).toEqual({
        ...(await store.getRun(entry.runId)),
        // The script's file name is for people (getRun, listRuns): a worker's load skips the join.
        script: undefined,
        updatedAt: expect.any(Date),
      });
      expect(JSON.stringify(loaded.journal)).toBe(
        JSON.stringify(await store.readJournal(entry.runId)),
      );
      expect(loaded.inbox).toEqual([
        { id: signal, runId: entry.runId, kind: "signal", name: "go", payload: big },
      ]);
      expect(await store.loadRun("run_that_does_not_exist", "owner-a", 30_000)).toBeUndefined();
    });

    it("authenticates tokens by hash", async () => {
      const token = await store.createToken("team-a", "ci");
      expect(await store.authenticate(token)).toBe("team-a");
      expect(await store.authenticate(`${token}x`)).toBeUndefined();
      const rows = await sql.query("SELECT 1 FROM rw_api_tokens WHERE token_hash = $1", [token]);
      expect(rows).toEqual([]); // never stored in the clear
    });

    it("tokens: scopes, list and revoke by id, and no plaintext in any column", async () => {
      const ns = `tok-${counter++}`;
      const full = await store.createToken(ns, "ci");
      const scraper = await store.createToken(ns, "prometheus", ["metrics"]);
      expect((await store.grant(full))?.scopes).toEqual(["read", "run", "operate"]);
      expect(await store.grant(scraper)).toEqual({
        id: tokenIdOf(scraper),
        namespace: ns,
        label: "prometheus",
        scopes: ["metrics"],
      });
      await expect(store.createToken(ns, "x", ["admin"])).rejects.toThrow(/not a token scope/);
      await expect(store.createToken(ns, "x", [])).rejects.toThrow(/at least one scope/);
      const listed = await store.listTokens(ns);
      expect(listed.map((t) => [t.id, t.label, t.revokedAt])).toEqual(
        expect.arrayContaining([
          [tokenIdOf(full), "ci", null],
          [tokenIdOf(scraper), "prometheus", null],
        ]),
      );
      expect(listed).toHaveLength(2);
      // Every column of every token row, as text: neither token appears in any of them.
      const rows = await sql.query<{ row: string }>(
        "SELECT row_to_json(t)::text AS row FROM rw_api_tokens t WHERE namespace = $1",
        [ns],
      );
      expect(rows).toHaveLength(2);
      for (const { row } of rows) {
        expect(row).not.toContain(full.slice(3));
        expect(row).not.toContain(scraper.slice(3));
      }
      // Another namespace cannot revoke it; its own can, and it stops working at once.
      await expect(store.revokeToken(tokenIdOf(full), "someone-else")).rejects.toThrow(
        /No API token/,
      );
      await expect(store.revokeToken("tok_nothex")).rejects.toThrow(/No API token/);
      const revoked = await store.revokeToken(tokenIdOf(full), ns);
      expect(revoked.revokedAt).not.toBeNull();
      expect(await store.grant(full)).toBeUndefined();
      expect(await store.authenticate(full)).toBeUndefined();
      expect(await store.grant(scraper)).toBeDefined();
    });

    it("deletes expired runs and the values only they used", async () => {
      const unique = { only: `for-${counter}`, pad: "y".repeat(70 * 1024) };
      const { entry, lease } = await newRun({ input: unique });
      const completed = { seq: 2, kind: "run.completed", at: 1, result: null } as const;
      await store.commit([
        { lease, afterSeq: 1, entries: [completed], status: "completed", releaseLease: true },
      ]);
      // Ended, but its holder waits for a call in flight: it may still append.
      const held = await newRun();
      await store.commit([
        { lease: held.lease, afterSeq: 1, entries: [completed], status: "completed" },
      ]);
      const blobsBefore = await countBlobs();
      const result = await store.deleteExpired(new Date(Date.now() + 120_000));
      expect(result.runs).toBeGreaterThanOrEqual(1);
      expect(await store.getRun(entry.runId)).toBeUndefined();
      expect(await store.readJournal(entry.runId)).toEqual([]);
      expect(await store.readJournal(held.entry.runId)).toHaveLength(2);
      // countBlobs rejects if retention removed the blob store itself rather than its blobs.
      expect(await countBlobs()).toBeLessThan(blobsBefore);
    });

    it("moves a run between epochs only if its journal still ends at the checked seq", async () => {
      const from = 700 + counter++;
      const to = from + 1;
      const { entry, lease } = await newRun({ epoch: from });
      await store.commit([{ lease, afterSeq: 1, entries: [call(2)], status: "waiting" }]);
      expect(await store.openRunsOfEpoch("default", from, 10)).toEqual([entry.runId]);
      const move = { from, to, by: "ops (default)" };
      // Checked at seq 1, but the journal has grown since: it stays.
      expect(await store.moveRunEpoch(lease, { ...move, checkedSeq: 1 })).toBe("changed");
      // A lease that is no longer the run's (someone took it since) moves nothing.
      const newer = (await store.acquireLease(entry.runId, "owner-b", 30_000, { steal: true }))!;
      expect(await store.moveRunEpoch(lease, { ...move, checkedSeq: 2 })).toBe("changed");
      expect((await store.getRun(entry.runId))?.epoch).toBe(from);
      expect(await store.moveRunEpoch(newer, { ...move, checkedSeq: 2 })).toBe("ok");
      expect((await store.getRun(entry.runId))?.epoch).toBe(to);
      expect(await store.openRunsOfEpoch("default", from, 10)).toEqual([]);
      // Moved once: a second try (a check taken again after a crash) finds it on `to` already.
      expect(await store.moveRunEpoch(newer, { ...move, checkedSeq: 2 })).toBe("changed");
      expect(await store.epochMoves(entry.runId)).toEqual([
        {
          runId: entry.runId,
          checkedSeq: 2,
          from,
          to,
          by: "ops (default)",
          checkId: null,
          at: expect.any(Date),
        },
      ]);
    });

    it("hands an epoch check to one worker of its target epoch, again only when that one is silent", async () => {
      const to = 800 + counter++;
      const check = await store.requestEpochCheck({
        namespace: "default",
        from: to - 1,
        to,
        requestedBy: "ops (default)",
        dryRun: true,
      });
      expect(check).toMatchObject({ from: to - 1, to, dryRun: true, takenBy: null, report: null });
      expect(await store.takeEpochCheck("w-other", [to + 1], 60_000)).toBeUndefined();
      expect((await store.takeEpochCheck("w-a", [to], 60_000))?.id).toBe(check.id);
      expect(await store.takeEpochCheck("w-b", [to], 60_000)).toBeUndefined();
      await new Promise((resolve) => setTimeout(resolve, 30));
      // w-a fell silent for longer than 10 ms: w-b takes it over, and w-a can no longer finish it.
      expect((await store.takeEpochCheck("w-b", [to], 10))?.id).toBe(check.id);
      const report = { checkedBy: "w-b", runtime: "Node x", runs: [] };
      await store.finishEpochCheck(check.id, "w-a", { ...report, checkedBy: "w-a" });
      expect((await store.getEpochCheck("default", check.id))?.finishedAt).toBeNull();
      await store.finishEpochCheck(check.id, "w-b", report);
      const done = await store.getEpochCheck("default", check.id);
      expect(done?.report).toEqual(report);
      expect(done?.finishedAt).toBeInstanceOf(Date);
      expect(await store.getEpochCheck("tenant-b", check.id)).toBeUndefined();
      expect(await store.takeEpochCheck("w-c", [to], 0)).toBeUndefined();
    });

    it("keeps capture policies per namespace and toolset, and finds a run's first redacted entry", async () => {
      const rules = { fields: ["$.card.number"], detectors: ["email"], patterns: [] };
      expect(await store.getCapturePolicy("cap-a", null)).toEqual({
        toolset: null,
        fields: [],
        detectors: [],
        patterns: [],
      });
      await store.setCapturePolicy("cap-a", null, rules);
      await store.setCapturePolicy("cap-a", "shop", {
        fields: [],
        detectors: [],
        patterns: [{ name: "ssn", regex: "\\d{3}" }],
      });
      expect(await store.getCapturePolicy("cap-a", null)).toMatchObject({
        toolset: null,
        ...rules,
      });
      // A run of toolset shop is redacted by both; another toolset's by the namespace-wide one.
      expect(await store.captureRules("cap-a", "shop")).toEqual([
        rules,
        { fields: [], detectors: [], patterns: [{ name: "ssn", regex: "\\d{3}" }] },
      ]);
      expect(await store.captureRules("cap-a", "other")).toEqual([rules]);
      // Another namespace has none of them.
      expect(await store.captureRules("cap-b", "shop")).toEqual([]);
      expect((await store.getCapturePolicy("cap-b", "shop")).fields).toEqual([]);

      const { entry, lease } = await newRun({ namespace: "cap-a" });
      expect(await store.firstRedacted(entry.runId)).toBeUndefined();
      const redacted = {
        ...call(2, { card: { number: { $redacted: "$.card.number" } } }),
        redacted: ["$.card.number"],
      } as unknown as JournalEntry;
      await store.commit([
        { lease, afterSeq: 1, entries: [redacted], status: "running", runRowUnchanged: true },
      ]);
      expect(await store.firstRedacted(entry.runId)).toEqual({ seq: 2, rules: ["$.card.number"] });
      expect((await store.readJournal(entry.runId))[1]).toEqual(redacted);
    });

    quarantineConformance(() => store);
    codecConformance(() => ({ sql, blobs, store }));

    it("refuses a database whose schema is newer than this build", async () => {
      await sql.query(
        "INSERT INTO rw_schema_migrations (version, name) VALUES (999, 'from-the-future')",
      );
      await expect(checkSchema(sql)).rejects.toThrow(
        /schema is version 999, newer than this build/,
      );
      await sql.query("DELETE FROM rw_schema_migrations WHERE version = 999");
      await expect(checkSchema(sql)).resolves.toBeUndefined();
    });
  });
}
