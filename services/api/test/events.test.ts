import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newRunEpoch } from "@rewind/sandbox";
import { LocalRunChanges, createApi } from "../src/index.js";
import {
  appendAsExecutor,
  completeRun,
  errorOf,
  openHarness,
  startRun,
  type Harness,
} from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("signals and cancel go to the run's inbox and ring the doorbell", () => {
  it("POST /v1/runs/:id/signals/:name stores the payload (or null) and rings", async () => {
    const id = await startRun(h);
    h.rings.length = 0;
    const sent = await h.app.inject({
      method: "POST",
      url: `/v1/runs/${id}/signals/approval`,
      headers: h.auth,
      payload: { approved: true, by: "ops" },
    });
    expect(sent.statusCode).toBe(202);
    expect(sent.json()).toEqual({ id: expect.any(Number) });
    const bare = await h.app.inject({
      method: "POST",
      url: `/v1/runs/${id}/signals/ping`,
      headers: h.auth,
    });
    expect(bare.statusCode).toBe(202);
    const scalar = await h.app.inject({
      method: "POST",
      url: `/v1/runs/${id}/signals/count`,
      headers: { ...h.auth, "content-type": "application/json" },
      payload: "42",
    });
    expect(scalar.statusCode).toBe(202);
    expect(await h.store.pendingInbox(id)).toEqual([
      {
        id: sent.json().id,
        runId: id,
        kind: "signal",
        name: "approval",
        payload: { approved: true, by: "ops" },
      },
      { id: bare.json().id, runId: id, kind: "signal", name: "ping", payload: null },
      { id: scalar.json().id, runId: id, kind: "signal", name: "count", payload: 42 },
    ]);
    expect(h.rings).toEqual([id, id, id]);
    // Nothing is journaled by the API: only the run's owner appends.
    expect(await h.store.readJournal(id)).toHaveLength(1);
    // No worker holds the run: each ring goes to its epoch's queue, for any worker.
    expect(h.routes.at(-1)).toEqual({ runId: id, epoch: newRunEpoch(), leases: 0 });
    // A worker holds it hot: the ring names that worker, so the activation goes there.
    await h.store.acquireLease(id, "worker-7", 30_000);
    await h.app.inject({ method: "POST", url: `/v1/runs/${id}/signals/ping`, headers: h.auth });
    expect(h.routes.at(-1)).toEqual({
      runId: id,
      epoch: newRunEpoch(),
      holder: "worker-7",
      leases: 1,
    });
  });

  it("takes signal names of up to 200 characters, URL-encoded", async () => {
    const id = await startRun(h);
    const name = `step/${"a".repeat(150)} ✓`;
    const sent = await h.app.inject({
      method: "POST",
      url: `/v1/runs/${id}/signals/${encodeURIComponent(name)}`,
      headers: h.auth,
      payload: { ok: true },
    });
    expect(sent.statusCode).toBe(202);
    expect((await h.store.pendingInbox(id))[0]).toMatchObject({ name, payload: { ok: true } });
    const tooLong = await h.app.inject({
      method: "POST",
      url: `/v1/runs/${id}/signals/${"b".repeat(201)}`,
      headers: h.auth,
    });
    expect(tooLong.statusCode).toBe(422);
    expect(errorOf(tooLong).field).toBe("params.name");
  });

  it("POST /v1/runs/:id/cancel stores a cancel (with an optional reason) and rings", async () => {
    const id = await startRun(h);
    h.rings.length = 0;
    const cancelled = await h.app.inject({
      method: "POST",
      url: `/v1/runs/${id}/cancel`,
      headers: h.auth,
    });
    expect(cancelled.statusCode).toBe(202);
    const why = await h.app.inject({
      method: "POST",
      url: `/v1/runs/${id}/cancel`,
      headers: h.auth,
      payload: { reason: "customer asked" },
    });
    expect(why.statusCode).toBe(202);
    expect(await h.store.pendingInbox(id)).toEqual([
      { id: cancelled.json().id, runId: id, kind: "cancel", name: null, payload: null },
      {
        id: why.json().id,
        runId: id,
        kind: "cancel",
        name: null,
        payload: { reason: "customer asked" },
      },
    ]);
    expect(h.rings).toEqual([id, id]);
  });

  it("refuses a signal or a cancel to a run that has ended (409), storing nothing", async () => {
    const id = await startRun(h);
    await completeRun(h.store, id);
    const signal = await h.app.inject({
      method: "POST",
      url: `/v1/runs/${id}/signals/approval`,
      headers: h.auth,
      payload: { approved: true },
    });
    expect(signal.statusCode).toBe(409);
    const error = errorOf(signal);
    expect(error.code).toBe("CONFLICT");
    expect(error.message).toContain("status completed");
    expect(error.message).toContain("signals go only to open runs");
    const cancel = await h.app.inject({
      method: "POST",
      url: `/v1/runs/${id}/cancel`,
      headers: h.auth,
    });
    expect(cancel.statusCode).toBe(409);
    expect(errorOf(cancel).message).toContain("only an open run can be cancelled");
    expect(await h.store.pendingInbox(id)).toEqual([]);
  });
});

describe("GET /v1/runs/:id/result", () => {
  it("answers at once for an ended run", async () => {
    const id = await startRun(h);
    await completeRun(h.store, id, { ok: 1 });
    const response = await h.app.inject({ url: `/v1/runs/${id}/result`, headers: h.auth });
    expect(response.json()).toEqual({ id, status: "completed", ended: true, result: { ok: 1 } });
  });

  it("shows a failed run's error", async () => {
    const id = await startRun(h);
    await appendAsExecutor(
      h.store,
      id,
      (seq) => [
        {
          seq,
          kind: "run.failed",
          at: 2_000,
          error: { name: "Error", message: "boom", code: "SCRIPT_ERROR" },
        },
      ],
      "failed",
    );
    const response = await h.app.inject({ url: `/v1/runs/${id}/result?wait=5s`, headers: h.auth });
    expect(response.json()).toEqual({
      id,
      status: "failed",
      ended: true,
      error: { name: "Error", message: "boom", code: "SCRIPT_ERROR" },
    });
  });

  it("long-polls: answers when the executor completes the run during the wait", async () => {
    const id = await startRun(h);
    const began = Date.now();
    const pending = h.app.inject({ url: `/v1/runs/${id}/result?wait=20s`, headers: h.auth });
    await sleep(400);
    await completeRun(h.store, id, "hello Ada");
    const response = await pending;
    const elapsed = Date.now() - began;
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ id, status: "completed", ended: true, result: "hello Ada" });
    expect(elapsed).toBeGreaterThanOrEqual(400);
    expect(elapsed).toBeLessThan(5_000);
  });

  it("answers 200 with ended: false and the status when the wait runs out", async () => {
    const id = await startRun(h);
    const began = Date.now();
    const response = await h.app.inject({
      url: `/v1/runs/${id}/result?wait=300ms`,
      headers: h.auth,
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ id, status: "queued", ended: false });
    expect(Date.now() - began).toBeGreaterThanOrEqual(290);
    const now = await h.app.inject({ url: `/v1/runs/${id}/result`, headers: h.auth });
    expect(now.json()).toEqual({ id, status: "queued", ended: false });
  });

  it("wakes on a change notice at once instead of waiting for the next poll", async () => {
    const changes = new LocalRunChanges();
    const app = createApi({
      store: h.store,
      doorbell: { ring() {} },
      version: "t",
      changes,
      pollMs: 30_000,
    });
    try {
      const id = await startRun(h);
      const pending = app.inject({ url: `/v1/runs/${id}/result?wait=20s`, headers: h.auth });
      await sleep(200);
      await completeRun(h.store, id);
      const notified = Date.now();
      changes.notify(id);
      const response = await pending;
      expect(response.json()).toMatchObject({ status: "completed", ended: true });
      expect(Date.now() - notified).toBeLessThan(2_000);
    } finally {
      await app.close();
    }
  });

  it("answers waiting requests at once when the API closes", async () => {
    const app = createApi({ store: h.store, doorbell: { ring() {} }, version: "t" });
    const id = await startRun(h);
    const pending = app.inject({ url: `/v1/runs/${id}/result?wait=60s`, headers: h.auth });
    await sleep(200);
    const began = Date.now();
    await app.close();
    const response = await pending;
    expect(response.json()).toMatchObject({ id, ended: false });
    expect(Date.now() - began).toBeLessThan(2_000);
  });
});

describe("over a real socket", () => {
  it("long-polls and refuses an oversized body the same way as through inject", async () => {
    const app = createApi({ store: h.store, doorbell: { ring() {} }, version: "t", pollMs: 50 });
    try {
      const base = await app.listen({ host: "127.0.0.1", port: 0 });
      const id = await startRun(h);
      const began = Date.now();
      const waited = await fetch(`${base}/v1/runs/${id}/result?wait=300ms`, { headers: h.auth });
      expect(await waited.json()).toEqual({ id, status: "queued", ended: false });
      expect(Date.now() - began).toBeGreaterThanOrEqual(290);

      const big = await fetch(`${base}/v1/runs/${id}/signals/big`, {
        method: "POST",
        headers: { ...h.auth, "content-type": "application/json" },
        body: JSON.stringify("x".repeat(9 * 1024 * 1024)),
      });
      expect(big.status).toBe(413);
      expect(((await big.json()) as { error: { code: string } }).error.code).toBe(
        "PAYLOAD_TOO_LARGE",
      );
      expect(await h.store.pendingInbox(id)).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
