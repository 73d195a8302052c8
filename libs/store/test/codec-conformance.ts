/**
 * The payload codec's part of the store conformance suite (docs/codec.md): every backend seals
 * a codec namespace's values at rest, reads them back as they were, rotates keys, and refuses
 * with the key's id where a key is missing or wrong.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  valueRef,
  type CallEntry,
  type Json,
  type JournalEntry,
  type RunStartedEntry,
} from "@rewind/core";
import {
  SqlStore,
  codecFromKeys,
  type BlobStore,
  type Lease,
  type SqlClient,
  type Store,
} from "../src/index.js";

export const KEY_1 = `k1:${randomBytes(32).toString("base64")}`;
export const KEY_2 = `k2:${randomBytes(32).toString("base64")}`;

let counter = 0;
const SECRET = "4111-1111-1111-1111";

function startedIn(namespace: string, input: Json): RunStartedEntry {
  counter++;
  return {
    seq: 1,
    kind: "run.started",
    at: 1_000,
    runId: `run_codec_${Date.now().toString(36)}_${counter.toString().padStart(4, "0")}`,
    scriptHash: "sha256:script",
    input,
    seed: "ab".repeat(32),
    epoch: 1,
    toolset: "shop",
    namespace,
  };
}

/** Everything the database and the blob store hold of one run, as text. */
async function atRest(sql: SqlClient, blobs: BlobStore, runId: string): Promise<string> {
  const journal = await sql.query<{ body: unknown }>(
    "SELECT body FROM rw_journal WHERE run_id = $1",
    [runId],
  );
  const run = await sql.query<{ result_json: string | null }>(
    "SELECT result_json FROM rw_runs WHERE id = $1",
    [runId],
  );
  const values = await sql.query<{ body: string | null; blob_key: string | null }>(
    `SELECT v.body, v.blob_key FROM rw_values v JOIN rw_run_values rv ON rv.ref = v.ref
      WHERE rv.run_id = $1`,
    [runId],
  );
  const texts = [
    ...journal.map((row) => JSON.stringify(row.body)),
    ...run.map((row) => row.result_json ?? ""),
  ];
  for (const value of values)
    texts.push(value.blob_key === null ? value.body! : await blobs.get(value.blob_key));
  return texts.join("\n");
}

export function codecConformance(
  open: () => { sql: SqlClient; blobs: BlobStore; store: Store },
): void {
  describe("payload codec", () => {
    const withKeys = (keys: string | undefined) => {
      const { sql, blobs } = open();
      // A store of its own (its own setting cache) over the same database and blobs; the suite's
      // store closes the connection.
      return new SqlStore(sql, blobs, codecFromKeys(keys));
    };

    /** A run in a codec namespace with a value of every kind, small (inline) and large (apart). */
    async function sealedRun(store: Store, namespace: string) {
      await store.putScript(namespace, {
        hash: "sha256:script",
        entry: "s.ts",
        code: "x",
        sourceMap: "{}",
      });
      const big = SECRET.repeat(40_000); // 760 KB: a blob
      const started = startedIn(namespace, { card: SECRET, big });
      await store.createRun({ started, ttlMs: 60_000 });
      const lease = (await store.acquireLease(started.runId, "owner-a", 30_000))!;
      const entries: JournalEntry[] = [
        {
          seq: 2,
          kind: "call",
          at: 1_000,
          callsite: "s.ts:3:5",
          name: "charge",
          args: { card: SECRET },
          callId: "c/2",
        } satisfies CallEntry,
        {
          seq: 3,
          kind: "call.result",
          at: 1_001,
          callSeq: 2,
          result: { receipt: SECRET.repeat(200) },
        },
        {
          seq: 4,
          kind: "output",
          at: 1_001,
          callsite: "s.ts:4:3",
          stream: "stdout",
          text: `charged ${SECRET}\n`,
        },
        {
          seq: 5,
          kind: "call",
          at: 1_001,
          callsite: "s.ts:5:5",
          name: "charge",
          args: { card: SECRET },
          callId: "c/5",
        } satisfies CallEntry,
      ];
      // One plain step (hot path) and one through rw_commit.
      expect(
        await store.commit([
          { lease, afterSeq: 1, entries: entries.slice(0, 2), status: "running" },
        ]),
      ).toEqual(["ok"]);
      expect(
        await store.commit([
          {
            lease,
            afterSeq: 3,
            entries: entries.slice(2),
            status: "running",
            runRowUnchanged: true,
          },
        ]),
      ).toEqual(["ok"]);
      await store.addInbox(started.runId, {
        kind: "signal",
        name: "approve",
        payload: { card: SECRET },
      });
      const completed: JournalEntry = {
        seq: 6,
        kind: "run.completed",
        at: 1_002,
        callsite: "s.ts:9:3",
        result: { card: SECRET },
      };
      expect(
        await store.commit([{ lease, afterSeq: 5, entries: [completed], status: "completed" }]),
      ).toEqual(["ok"]);
      return { started, lease, journal: [started, ...entries, completed] as JournalEntry[] };
    }

    it("seals every value of a codec namespace at rest and reads it back as it was", async () => {
      const store = withKeys(KEY_1);
      await store.setCodec("sealed", true);
      expect(await store.getCodec("sealed")).toMatchObject({
        enabled: true,
        encryptingKeyId: "k1",
        keyIds: ["k1"],
      });
      const { started, journal } = await sealedRun(store, "sealed");
      const { sql, blobs } = open();
      const stored = await atRest(sql, blobs, started.runId);
      expect(stored).not.toContain(SECRET);
      expect(stored).toContain("rwc2:k1:");
      expect(await store.readJournal(started.runId)).toEqual(journal);
      expect((await store.getRun(started.runId))?.result).toEqual({ card: SECRET });
      expect(await store.pendingInbox(started.runId)).toMatchObject([
        { name: "approve", payload: { card: SECRET } },
      ]);
      // Another process with the same key reads it all too.
      expect(await withKeys(KEY_1).readJournal(started.runId)).toEqual(journal);
    });

    it("keeps a namespace without the codec content-addressed and in the clear", async () => {
      const store = withKeys(KEY_1);
      const big = { text: "plain".repeat(1000) };
      const started = startedIn("default", big);
      await store.createRun({ started, ttlMs: 60_000 });
      const rows = await open().sql.query<{ ref: string; body: string }>(
        "SELECT v.ref, v.body FROM rw_values v JOIN rw_run_values rv ON rv.ref = v.ref WHERE rv.run_id = $1",
        [started.runId],
      );
      expect(rows).toEqual([{ ref: valueRef(big), body: JSON.stringify(big) }]);
      // Output that looks sealed is only output: it is never taken for a sealed value.
      const lease = (await store.acquireLease(started.runId, "o", 30_000))!;
      const output: JournalEntry = {
        seq: 2,
        kind: "output",
        at: 1,
        stream: "stdout",
        text: "rwc1:k1:AAAA",
      };
      await store.commit([
        { lease, afterSeq: 1, entries: [output], status: "running", runRowUnchanged: true },
      ]);
      expect((await store.readJournal(started.runId))[1]).toEqual(output);
    });

    it("refuses a sealed value moved at rest to another namespace's row, saying so", async () => {
      const store = withKeys(KEY_1);
      await store.setCodec("bound-a", true);
      await store.setCodec("bound-b", true);
      const a = await sealedRun(store, "bound-a");
      const b = await sealedRun(store, "bound-b");
      // Someone who can write the database gives B's result row A's sealed result.
      await open().sql.query(
        `UPDATE rw_journal SET body = (SELECT body FROM rw_journal WHERE run_id = $1 AND seq = 6)
          WHERE run_id = $2 AND seq = 6`,
        [a.started.runId, b.started.runId],
      );
      await expect(store.readJournal(b.started.runId)).rejects.toThrow(
        /as a value of namespace bound-b: .*moved from another namespace's row/,
      );
      expect(await store.readJournal(a.started.runId)).toEqual(a.journal);
    });

    it("tells two namespaces' equal values apart by nothing at rest: refs hash the ciphertext", async () => {
      const store = withKeys(KEY_1);
      await store.setCodec("sealed-a", true);
      await store.setCodec("sealed-b", true);
      const same = { text: SECRET.repeat(500) }; // stored apart
      const a = startedIn("sealed-a", same);
      const b = startedIn("sealed-b", same);
      for (const run of [a, b]) {
        await store.putScript(run.namespace, {
          hash: "sha256:script",
          entry: "s.ts",
          code: "x",
          sourceMap: "{}",
        });
        await store.createRun({ started: run, ttlMs: 60_000 });
      }
      const refs = await open().sql.query<{ run_id: string; ref: string }>(
        "SELECT run_id, ref FROM rw_run_values WHERE run_id = ANY($1)",
        [[a.runId, b.runId]],
      );
      expect(refs).toHaveLength(2);
      expect(refs[0]!.ref).not.toBe(refs[1]!.ref);
      expect(refs.map((r) => r.ref)).not.toContain(valueRef(same));
      expect((await store.readJournal(b.runId))[0]).toEqual(b);
    });

    it("rotates: the first key seals, every key listed opens", async () => {
      const old = withKeys(KEY_1);
      await old.setCodec("rotating", true);
      const { started, lease, journal } = await sealedRun(old, "rotating");
      const rotated = withKeys(`${KEY_2},${KEY_1}`);
      expect(await rotated.readJournal(started.runId)).toEqual(journal);
      // A new run after the rotation is sealed with k2 only.
      const next = startedIn("rotating", { card: SECRET });
      await rotated.createRun({ started: next, ttlMs: 60_000 });
      const { sql, blobs } = open();
      const text = await atRest(sql, blobs, next.runId);
      expect(text).toContain("rwc2:k2:");
      expect(text).not.toContain("rwc2:k1:");
      // Dropping k1 too early: the old run's values name the key they need.
      const k2Only = withKeys(KEY_2);
      expect((await k2Only.readJournal(next.runId))[0]).toEqual(next);
      await expect(k2Only.readJournal(started.runId)).rejects.toThrow(
        /sealed with payload codec key "k1", which this process does not have: add k1:<its base64 key> to REWIND_CODEC_KEYS/,
      );
      await expect(k2Only.getRun(started.runId)).rejects.toMatchObject({
        code: "UNAVAILABLE",
        details: { keyId: "k1" },
      });
      expect(lease.namespace).toBe("rotating");
    });

    it("refuses a wrong key under a known id, and a process with no keys at all", async () => {
      const store = withKeys(KEY_1);
      await store.setCodec("guarded", true);
      const { started } = await sealedRun(store, "guarded");
      const wrong = withKeys(`k1:${randomBytes(32).toString("base64")}`);
      await expect(wrong.readJournal(started.runId)).rejects.toThrow(
        /does not open with the key of that id in REWIND_CODEC_KEYS/,
      );
      const none = withKeys(undefined);
      await expect(none.readJournal(started.runId)).rejects.toThrow(/key "k1".*keys held: none/);
      // Nor does it write in the clear what the namespace wants sealed.
      await expect(
        none.createRun({ started: startedIn("guarded", { card: SECRET }), ttlMs: 60_000 }),
      ).rejects.toThrow(
        /namespace guarded has the payload codec on, but this process has no keys/i,
      );
      await expect(none.setCodec("guarded", true)).rejects.toMatchObject({ code: "CONFLICT" });
      // A worker without the key hands an open run back at once, its attempt not counted: the
      // run is not at fault, and a process with the key carries on.
      const open_ = startedIn("guarded", { card: SECRET });
      await store.createRun({ started: open_, ttlMs: 60_000 });
      await expect(none.loadRun(open_.runId, "keyless", 30_000)).rejects.toThrow(/key "k1"/);
      await expect(none.loadRun(open_.runId, "keyless", 30_000)).rejects.toThrow(/key "k1"/);
      const loaded = (await store.loadRun(open_.runId, "keyed", 30_000))!;
      expect(loaded.lease.attempts).toBe(1);
      expect(loaded.journal[0]).toEqual(open_);
    });

    it("seals appends under a lease without a namespace by looking the run up", async () => {
      const store = withKeys(KEY_1);
      await store.setCodec("lookup", true);
      await store.putScript("lookup", {
        hash: "sha256:script",
        entry: "s.ts",
        code: "x",
        sourceMap: "{}",
      });
      const started = startedIn("lookup", null);
      await store.createRun({ started, ttlMs: 60_000 });
      const { namespace: _, ...bare } = (await store.acquireLease(started.runId, "o", 30_000))!;
      const lease: Lease = bare;
      const output: JournalEntry = {
        seq: 2,
        kind: "output",
        at: 1,
        stream: "stdout",
        text: SECRET,
      };
      expect(
        await store.commit([
          { lease, afterSeq: 1, entries: [output], status: "running", runRowUnchanged: true },
        ]),
      ).toEqual(["ok"]);
      const { sql, blobs } = open();
      expect(await atRest(sql, blobs, started.runId)).not.toContain(SECRET);
      expect((await store.readJournal(started.runId))[1]).toEqual(output);
    });

    it("seals a quarantine report, which quotes the run's values, its reason in the clear", async () => {
      const store = withKeys(KEY_1);
      await store.setCodec("diverged", true);
      await store.putScript("diverged", {
        hash: "sha256:script",
        entry: "s.ts",
        code: "x",
        sourceMap: "{}",
      });
      const started = startedIn("diverged", { card: SECRET });
      await store.createRun({ started, ttlMs: 60_000 });
      const lease = (await store.acquireLease(started.runId, "o", 30_000))!;
      const report = {
        reason: "divergence",
        message: `call charge({ card: "${SECRET}" }) differs`,
      };
      const quarantined: JournalEntry = { seq: 2, kind: "run.quarantined", at: 2, report };
      expect(
        await store.commit([{ lease, afterSeq: 1, entries: [quarantined], status: "quarantined" }]),
      ).toEqual(["ok"]);
      const { sql, blobs } = open();
      expect(await atRest(sql, blobs, started.runId)).not.toContain(SECRET);
      expect((await store.readJournal(started.runId))[1]).toEqual(quarantined);
      expect(await store.listQuarantined({ namespace: "diverged" })).toMatchObject([
        { seq: 2, report },
      ]);
      expect(await store.quarantineCounts()).toContainEqual({
        epoch: 1,
        reason: "divergence",
        runs: expect.any(Number),
      });
    });

    it("seals an epoch check's report, whose verdicts quote the runs' values", async () => {
      const store = withKeys(KEY_1);
      await store.setCodec("checked", true);
      const to = 900 + (counter++ % 90);
      const check = await store.requestEpochCheck({
        namespace: "checked",
        from: to - 1,
        to,
        requestedBy: "ops",
        dryRun: true,
      });
      expect((await store.takeEpochCheck("w", [to], 60_000))?.id).toBe(check.id);
      const report = {
        checkedBy: "w",
        runtime: "Node x",
        runs: [
          {
            runId: "run_x",
            verdict: "diverges" as const,
            checkedSeq: 3,
            message: `charge({ card: "${SECRET}" })`,
          },
        ],
      };
      await store.finishEpochCheck(check.id, "w", report);
      const rows = await open().sql.query<{ report: unknown }>(
        "SELECT report FROM rw_epoch_checks WHERE id = $1",
        [check.id],
      );
      expect(JSON.stringify(rows[0]!.report)).not.toContain(SECRET);
      expect((await store.getEpochCheck("checked", check.id))?.report).toEqual(report);
    });

    it("keeps no plain hash of a keyed start's request: its digest is keyed, rotation or not", async () => {
      const store = withKeys(KEY_1);
      await store.setCodec("keyed", true);
      await store.putScript("keyed", {
        hash: "sha256:script",
        entry: "s.ts",
        code: "x",
        sourceMap: "{}",
      });
      const first = startedIn("keyed", { card: SECRET });
      const asked = { key: `key-${counter}`, digest: "d".repeat(64) };
      // Sealed: its start never travels on a ring in the clear (FirstActivation.started).
      expect(await store.createRun({ started: first, ttlMs: 60_000, idempotency: asked })).toEqual({
        created: true,
        inClear: false,
      });
      const rows = await open().sql.query<{ request_digest: string }>(
        "SELECT request_digest FROM rw_runs WHERE id = $1",
        [first.runId],
      );
      expect(rows[0]!.request_digest).toMatch(/^hmac1:k1:[0-9a-f]{64}$/);
      const again = startedIn("keyed", { card: SECRET });
      const repeat = { created: false, runId: first.runId, digest: asked.digest };
      expect(await store.createRun({ started: again, ttlMs: 60_000, idempotency: asked })).toEqual(
        repeat,
      );
      const rotated = withKeys(`${KEY_2},${KEY_1}`);
      expect(
        await rotated.createRun({ started: again, ttlMs: 60_000, idempotency: asked }),
      ).toEqual(repeat);
      // Another request under the same key does not match.
      const other = await store.createRun({
        started: again,
        ttlMs: 60_000,
        idempotency: { ...asked, digest: "e".repeat(64) },
      });
      expect(other).toMatchObject({ created: false, runId: first.runId });
      expect((other as { digest: string }).digest).not.toBe("e".repeat(64));
    });

    it("switched off, seals nothing new and still opens what it sealed", async () => {
      const store = withKeys(KEY_1);
      await store.setCodec("switching", true);
      const { started, journal } = await sealedRun(store, "switching");
      expect((await store.setCodec("switching", false)).enabled).toBe(false);
      const plain = startedIn("switching", { card: SECRET });
      await store.createRun({ started: plain, ttlMs: 60_000 });
      const { sql, blobs } = open();
      expect(await atRest(sql, blobs, plain.runId)).toContain(SECRET);
      expect(await store.readJournal(started.runId)).toEqual(journal);
    });
  });
}
