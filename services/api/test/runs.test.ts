import { createHash } from "node:crypto";
import { parseJournalFile } from "@rewind/journal";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newRunEpoch } from "@rewind/sandbox";
import type { RunChanges } from "../src/run-changes.js";
import { SCRIPT, completeRun, errorOf, openHarness, startRun, type Harness } from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h.close());

const sha = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

describe("POST /v1/runs", () => {
  it("stores the script and the run with its run.started entry, then rings the doorbell", async () => {
    const response = await h.app.inject({
      method: "POST",
      url: "/v1/runs",
      headers: h.auth,
      // The client's hash is ignored: the API computes it from the code.
      payload: {
        script: { ...SCRIPT, hash: "sha256:lies" },
        input: { z: 1, a: [2, { y: 1, b: 0 }] },
        toolset: "shop",
      },
    });
    expect(response.statusCode).toBe(201);
    const body = response.json();
    expect(body).toEqual({
      id: expect.stringMatching(/^run_/),
      status: "queued",
      scriptHash: sha(SCRIPT.code),
    });
    expect(response.headers.location).toBe(`/v1/runs/${body.id}`);
    expect(h.rings).toContain(body.id);

    expect(await h.store.getScript("acme", sha(SCRIPT.code))).toEqual({
      hash: sha(SCRIPT.code),
      ...SCRIPT,
    });
    const run = await h.store.getRun(body.id);
    expect(run).toMatchObject({
      status: "queued",
      namespace: "acme",
      toolset: "shop",
      epoch: newRunEpoch(),
      lastSeq: 1,
    });
    const [started] = await h.store.readJournal(body.id);
    expect(started).toMatchObject({
      seq: 1,
      kind: "run.started",
      runId: body.id,
      scriptHash: sha(SCRIPT.code),
      seed: expect.stringMatching(/^[0-9a-f]{64}$/),
      epoch: newRunEpoch(),
      toolset: "shop",
      namespace: "acme",
    });
    // The input is journaled in canonical key order.
    expect(JSON.stringify((started as { input: unknown }).input)).toBe(
      '{"a":[2,{"b":0,"y":1}],"z":1}',
    );
    expect(Math.abs(started!.at - Date.now())).toBeLessThan(60_000);
    // Default TTL: 30 days.
    expect(run!.ttlMs).toBe(30 * 86_400_000);
  });

  it("starts a run of a script stored before, by its hash, with a given seed, ttl and default toolset", async () => {
    const seed = "0f".repeat(32);
    const response = await h.app.inject({
      method: "POST",
      url: "/v1/runs",
      headers: h.auth,
      payload: { script: { hash: sha(SCRIPT.code) }, seed, ttl: "2d" },
    });
    expect(response.statusCode, response.body).toBe(201);
    const { id } = response.json();
    const run = await h.store.getRun(id);
    expect(run).toMatchObject({ toolset: "default", ttlMs: 2 * 86_400_000 });
    const [started] = await h.store.readJournal(id);
    expect(started).toMatchObject({ seed, input: null });
  });

  it("accepts a TTL in milliseconds", async () => {
    const id = await startRun(h, { ttl: 90_000 });
    expect((await h.store.getRun(id))!.ttlMs).toBe(90_000);
  });
});

describe("POST /v1/runs?wait: start and await in one request", () => {
  /** Starts with `wait` and returns the pending answer and, once rung, the run's id. */
  async function startWaiting(url: string, headers: Record<string, string> = {}) {
    const before = h.rings.length;
    const answer = h.app.inject({
      method: "POST",
      url,
      headers: { ...h.auth, ...headers },
      payload: { script: SCRIPT, input: { name: "Ada" } },
    });
    const deadline = Date.now() + 5_000;
    while (h.rings.length === before && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 5));
    return { answer, id: h.rings.at(-1)! };
  }

  it("answers once the run ends, with its result, as GET …/result would", async () => {
    const { answer, id } = await startWaiting("/v1/runs?wait=10s");
    await new Promise((resolve) => setTimeout(resolve, 100));
    await completeRun(h.store, id, "hello Ada");
    const response = await answer;
    expect(response.statusCode, response.body).toBe(201);
    expect(response.headers.location).toBe(`/v1/runs/${id}`);
    expect(response.json()).toEqual({
      id,
      status: "completed",
      scriptHash: sha(SCRIPT.code),
      ended: true,
      result: "hello Ada",
    });
  });

  it("answers the run as it is when the wait passes first, not ended", async () => {
    const { answer, id } = await startWaiting("/v1/runs?wait=150");
    const response = await answer;
    expect(response.statusCode).toBe(201);
    expect(response.json()).toEqual({
      id,
      status: "queued",
      scriptHash: sha(SCRIPT.code),
      ended: false,
    });
  });

  it("waits, on a retry with the same Idempotency-Key, for the run the first start made", async () => {
    const key = { "idempotency-key": `wait-${Date.now()}` };
    const first = await startWaiting("/v1/runs?wait=100", key);
    expect((await first.answer).json()).toMatchObject({ id: first.id, ended: false });
    const retry = h.app.inject({
      method: "POST",
      url: "/v1/runs?wait=10s",
      headers: { ...h.auth, ...key },
      payload: { script: SCRIPT, input: { name: "Ada" } },
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await completeRun(h.store, first.id, "once");
    const response = await retry;
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      id: first.id,
      status: "completed",
      scriptHash: sha(SCRIPT.code),
      ended: true,
      result: "once",
    });
  });

  it("refuses a wait longer than 60s, saying how to wait longer", async () => {
    const response = await h.app.inject({
      method: "POST",
      url: "/v1/runs?wait=2m",
      headers: h.auth,
      payload: { script: SCRIPT, input: { name: "Ada" } },
    });
    expect(response.statusCode).toBe(422);
    expect(errorOf(response).message).toMatch(/wait must be at most 60s.*result/);
  });
});

describe("a waiting client", () => {
  it("that leaves stops the wait at once; one answered as usual was never aborted", async () => {
    // Notices that say which waits are open, keep the signal each wait listens to, and tell a
    // wait its run changed when the test says so.
    const signals = new Map<string, AbortSignal>();
    const notices = new Map<string, () => void>();
    let open = 0;
    const changes: RunChanges = {
      watch: async (runId) => {
        open++;
        return {
          next: (ms, signal) =>
            new Promise<void>((resolve) => {
              signals.set(runId, signal);
              notices.set(runId, resolve);
              const timer = setTimeout(resolve, ms);
              signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), {
                once: true,
              });
            }),
          close: () => void open--,
        };
      },
    };
    const waits = await openHarness({ changes, pollMs: 60_000 });
    try {
      const address = await waits.app.listen({ port: 0, host: "127.0.0.1" });
      const start = async () =>
        (
          await waits.app.inject({
            method: "POST",
            url: "/v1/runs",
            headers: waits.auth,
            payload: { script: SCRIPT, input: { name: "Ada" } },
          })
        ).json<{ id: string }>().id;
      const settle = async (done: () => boolean) => {
        for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
      };

      // Left while it waits (for 30 s): its signal aborts and its watch closes at once.
      const leaving = await start();
      const client = new AbortController();
      const gone = fetch(`${address}/v1/runs/${leaving}/result?wait=30s`, {
        headers: waits.auth,
        signal: client.signal,
      }).catch(() => "left");
      await settle(() => signals.has(leaving));
      client.abort();
      expect(await gone).toBe("left");
      await settle(() => open === 0);
      expect(open).toBe(0);
      expect(signals.get(leaving)?.aborted).toBe(true);

      // Answered: its connection closes after the answer, which is no client leaving.
      const staying = await start();
      const answer = fetch(`${address}/v1/runs/${staying}/result?wait=30s`, {
        headers: waits.auth,
      });
      await settle(() => signals.has(staying));
      await completeRun(waits.store, staying, "hello Ada");
      notices.get(staying)!(); // the notice a worker would send
      expect((await answer).status).toBe(200);
      await settle(() => open === 0);
      await new Promise((r) => setTimeout(r, 50));
      expect(signals.get(staying)?.aborted).toBe(false);
    } finally {
      waits.app.server.closeAllConnections(); // the client's kept-alive one
      await waits.close();
    }
  });
});

describe("GET /v1/runs and /v1/runs/:id", () => {
  it("shows a run with ISO dates, and its result once it has ended", async () => {
    const id = await startRun(h);
    const queued = await h.app.inject({ url: `/v1/runs/${id}`, headers: h.auth });
    expect(queued.statusCode).toBe(200);
    expect(queued.json()).toEqual({
      id,
      status: "queued",
      namespace: "acme",
      scriptHash: sha(SCRIPT.code),
      script: "hello.ts",
      toolset: "default",
      epoch: newRunEpoch(),
      lastSeq: 1,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      updatedAt: expect.stringMatching(/Z$/),
      replayable: "strict",
    });
    await completeRun(h.store, id, { greeting: "hello Ada" });
    const done = (await h.app.inject({ url: `/v1/runs/${id}`, headers: h.auth })).json();
    expect(done).toMatchObject({
      status: "completed",
      result: { greeting: "hello Ada" },
      lastSeq: 3,
    });
    expect(Date.parse(done.endedAt)).toBeGreaterThan(0);
    expect(Date.parse(done.expiresAt)).toBeGreaterThan(Date.parse(done.endedAt));
  });

  it("lists the namespace's runs newest first, by status, page by page", async () => {
    const other = await h.app.inject({ url: "/v1/runs", headers: h.otherAuth });
    expect(other.json()).toEqual({ runs: [] });

    const all = (await h.app.inject({ url: "/v1/runs?limit=500", headers: h.auth })).json();
    expect(all.next).toBeUndefined();
    const ids = all.runs.map((r: { id: string }) => r.id);
    expect(ids.length).toBeGreaterThanOrEqual(4);
    expect([...ids].sort().reverse()).toEqual(ids);

    const first = (await h.app.inject({ url: "/v1/runs?limit=2", headers: h.auth })).json();
    expect(first.runs.map((r: { id: string }) => r.id)).toEqual(ids.slice(0, 2));
    expect(first.next).toBe(ids[1]);
    const second = (
      await h.app.inject({ url: `/v1/runs?limit=2&before=${first.next}`, headers: h.auth })
    ).json();
    expect(second.runs.map((r: { id: string }) => r.id)).toEqual(ids.slice(2, 4));

    const completed = (
      await h.app.inject({ url: "/v1/runs?status=completed", headers: h.auth })
    ).json();
    expect(completed.runs.length).toBeGreaterThanOrEqual(1);
    expect(completed.runs.every((r: { status: string }) => r.status === "completed")).toBe(true);
  });
});

describe("GET /v1/runs/:id/journal", () => {
  it("reads the journal as JSON, after a seq, and as a journal file (JSON Lines)", async () => {
    const id = await startRun(h);
    await completeRun(h.store, id);

    const whole = await h.app.inject({ url: `/v1/runs/${id}/journal`, headers: h.auth });
    expect(whole.statusCode).toBe(200);
    expect(whole.json().status).toBe("completed");
    expect(whole.json().entries.map((e: { kind: string }) => e.kind)).toEqual([
      "run.started",
      "output",
      "run.completed",
    ]);
    // Entries keep their canonical key order: seq, kind, at, callsite, then the kind's fields.
    expect(Object.keys(whole.json().entries[1])).toEqual([
      "seq",
      "kind",
      "at",
      "callsite",
      "stream",
      "text",
    ]);

    const after = await h.app.inject({ url: `/v1/runs/${id}/journal?after=1`, headers: h.auth });
    expect(after.json().entries.map((e: { seq: number }) => e.seq)).toEqual([2, 3]);

    const file = await h.app.inject({
      url: `/v1/runs/${id}/journal?format=jsonl`,
      headers: h.auth,
    });
    expect(file.statusCode).toBe(200);
    expect(file.headers["content-type"]).toMatch(/^application\/x-ndjson/);
    expect(file.body.split("\n")).toHaveLength(4);
    const parsed = parseJournalFile(file.body);
    expect(parsed).toEqual(whole.json().entries);
  });

  it("reads the journal in pages with limit, and says how to ask for a page it refuses", async () => {
    const id = await startRun(h);
    await completeRun(h.store, id);
    const seqs = async (q: string) =>
      (await h.app.inject({ url: `/v1/runs/${id}/journal?${q}`, headers: h.auth }))
        .json()
        .entries.map((e: { seq: number }) => e.seq);
    expect(await seqs("limit=2")).toEqual([1, 2]);
    expect(await seqs("after=2&limit=2")).toEqual([3]);
    expect(await seqs("after=3&limit=2")).toEqual([]);
    for (const [limit, says] of [
      ["0", "query.limit: must be a number of entries (a whole number from 1 to 10000)"],
      ["x", "query.limit: must be a number of entries (a whole number from 1 to 10000)"],
      ["10001", "query.limit: must be at most 10000: read the rest with after=<the last seq read>"],
    ]) {
      const refused = await h.app.inject({
        url: `/v1/runs/${id}/journal?limit=${limit}`,
        headers: h.auth,
      });
      expect(refused.statusCode).toBe(422);
      expect(refused.json().error.code).toBe("INVALID_INPUT");
      expect(refused.json().error.message).toContain(says);
    }
  });

  it("follows a run: with wait, answers as soon as entries after `after` are committed", async () => {
    const id = await startRun(h);
    const began = Date.now();
    const pending = h.app.inject({
      url: `/v1/runs/${id}/journal?after=1&wait=10s`,
      headers: h.auth,
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await completeRun(h.store, id);
    const response = await pending;
    expect(response.statusCode).toBe(200);
    expect(response.json().entries.map((e: { kind: string }) => e.kind)).toEqual([
      "output",
      "run.completed",
    ]);
    expect(Date.now() - began).toBeLessThan(5_000);
  });

  it("answers with no entries when nothing came before the wait ended", async () => {
    const id = await startRun(h);
    const response = await h.app.inject({
      url: `/v1/runs/${id}/journal?after=1&wait=200`,
      headers: h.auth,
    });
    expect(response.json()).toEqual({ entries: [], status: "queued" });
  });
});

describe("GET /v1/runs/:id/values/:ref", () => {
  it("defers a run's blob-store values from its journal page, and reads each to its own namespace only", async () => {
    const huge = "v".repeat(100_000);
    const id = await startRun(h, { input: { huge } });
    await completeRun(h.store, id);
    const page = await h.app.inject({
      url: `/v1/runs/${id}/journal?values=deferred`,
      headers: h.auth,
    });
    expect(page.statusCode).toBe(200);
    const { entries, deferred } = page.json();
    expect(entries[0].input).toBeNull();
    expect(Object.keys(deferred)).toEqual(["1.input"]);
    const { ref, size } = deferred["1.input"];
    expect(ref).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(size).toBeGreaterThan(100_000);
    // The journal file and the plain page keep every value inline.
    const inline = await h.app.inject({ url: `/v1/runs/${id}/journal`, headers: h.auth });
    expect(inline.json().entries[0].input).toEqual({ huge });
    expect(inline.json().deferred).toBeUndefined();

    const value = await h.app.inject({ url: `/v1/runs/${id}/values/${ref}`, headers: h.auth });
    expect(value.statusCode).toBe(200);
    expect(value.json()).toEqual({ ref, value: { huge } });
    const theirs = await h.app.inject({
      url: `/v1/runs/${id}/values/${ref}`,
      headers: h.otherAuth,
    });
    expect(theirs.statusCode).toBe(404);
    // A value another run holds is not this run's to give.
    const other = await startRun(h);
    const elsewhere = await h.app.inject({
      url: `/v1/runs/${other}/values/${ref}`,
      headers: h.auth,
    });
    expect(elsewhere.statusCode).toBe(404);
    expect(elsewhere.json().error.message).toContain(`holds no value ${ref}`);
    const bad = await h.app.inject({ url: `/v1/runs/${id}/values/nope`, headers: h.auth });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().error.message).toContain("must be a value's reference, sha256:");
  });
});

describe("GET /v1/runs/:id/script", () => {
  it("gives a run's compiled script to its own namespace only", async () => {
    const id = await startRun(h);
    const mine = await h.app.inject({ url: `/v1/runs/${id}/script`, headers: h.auth });
    expect(mine.statusCode).toBe(200);
    expect(mine.json()).toEqual({ hash: sha(SCRIPT.code), ...SCRIPT });
    const theirs = await h.app.inject({ url: `/v1/runs/${id}/script`, headers: h.otherAuth });
    expect(theirs.statusCode).toBe(404);
    expect(theirs.json().error.code).toBe("NOT_FOUND");
  });
});
