/**
 * Start idempotency (issue 18) through the API, on both store backends (PGlite and Postgres):
 * the same Idempotency-Key and request answer the first start's run (200, nothing new started,
 * no second ring), another request with the key is a 409 naming it, keys are per namespace, and
 * concurrent starts with one key make one run.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCRIPT, errorOf, openHarness, type Harness } from "./harness.js";

describe.each([
  { backend: "PGlite", postgres: false },
  { backend: "Postgres", postgres: true },
])("POST /v1/runs with an Idempotency-Key on $backend", ({ postgres }) => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness({ postgres });
  });
  afterAll(async () => h.close());

  const start = (
    key: string | undefined,
    body: Record<string, unknown> = {},
    auth: { authorization: string } = h.auth,
  ) =>
    h.app.inject({
      method: "POST",
      url: "/v1/runs",
      headers: { ...auth, ...(key !== undefined ? { "idempotency-key": key } : {}) },
      payload: { script: SCRIPT, input: { name: "Ada" }, ...body },
    });

  it("answers the same run with 200 for the same key and request, and starts nothing", async () => {
    const first = await start("order-1");
    expect(first.statusCode).toBe(201);
    const id = first.json().id as string;
    const rings = h.rings.length;
    // Key order and the TTL do not make another request; the body's field is the header's twin.
    const again = await start(undefined, {
      input: { name: "Ada" },
      ttl: "2d",
      idempotencyKey: "order-1",
    });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ id, status: "queued", scriptHash: first.json().scriptHash });
    expect(again.headers.location).toBe(`/v1/runs/${id}`);
    expect(h.rings.length).toBe(rings);
    const { runs } = (await h.app.inject({ url: "/v1/runs", headers: h.auth })).json();
    expect(runs.filter((r: { id: string }) => r.id === id)).toHaveLength(1);
    // Without a key, every start is a new run.
    const a = await start(undefined);
    const b = await start(undefined);
    expect([a.statusCode, b.statusCode]).toEqual([201, 201]);
    expect(a.json().id).not.toBe(b.json().id);
  });

  it("refuses the same key with another input, toolset or seed: 409 naming the key", async () => {
    const first = await start("order-2");
    expect(first.statusCode).toBe(201);
    for (const other of [
      { input: { name: "Bob" } },
      { toolset: "shop" },
      { seed: "ab".repeat(32) },
      { script: { ...SCRIPT, code: `${SCRIPT.code}\n// changed` } },
    ]) {
      const response = await start("order-2", other);
      expect(response.statusCode).toBe(409);
      const error = errorOf(response);
      expect(error.code).toBe("CONFLICT");
      expect(error.message).toContain("order-2");
      expect(error.message).toContain(first.json().id);
    }
  });

  it("keeps keys apart per namespace", async () => {
    const mine = await start("shared-key");
    const theirs = await start("shared-key", {}, h.otherAuth);
    expect([mine.statusCode, theirs.statusCode]).toEqual([201, 201]);
    expect(mine.json().id).not.toBe(theirs.json().id);
  });

  it("makes one run of concurrent starts with one key", async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => start("burst")));
    const ids = new Set(answers.map((r) => r.json().id as string));
    expect(ids.size).toBe(1);
    expect(answers.map((r) => r.statusCode).sort()).toEqual([
      200, 200, 200, 200, 200, 200, 200, 201,
    ]);
  });

  it("keeps an input stored apart (over 64 KiB) idempotent too", async () => {
    const input = { name: "x".repeat(70 * 1024) };
    const first = await start("big-1", { input });
    expect(first.statusCode).toBe(201);
    const again = await start("big-1", { input });
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(first.json().id);
    expect((await start("big-1", { input: { name: "y" } })).statusCode).toBe(409);
  });

  it("refuses a malformed key, or two different keys, naming the field", async () => {
    const spaced = await start("has space");
    expect(spaced.statusCode).toBe(422);
    expect(errorOf(spaced).field).toBe("headers.idempotency-key");
    const both = await start("k1", { idempotencyKey: "k2" });
    expect(both.statusCode).toBe(422);
    expect(errorOf(both).field).toBe("body.idempotencyKey");
  });
});
