/**
 * Every rejected request answers { error: { code, message, field? } } with the table's status, a
 * message that says what to fix, and stores nothing.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SCRIPT, errorOf, openHarness, startRun, completeRun, type Harness } from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h.close());
beforeEach(() => {
  h.rings.length = 0;
});

async function runsStored(): Promise<number> {
  return (await h.store.listRuns({ namespace: "acme", limit: 1000 })).length;
}

function post(url: string, payload: unknown, headers: Record<string, string> = h.auth) {
  return h.app.inject({ method: "POST", url, headers, payload: payload as string });
}

describe("bad bodies", () => {
  it("a malformed JSON body is 422 INVALID_INPUT naming the body", async () => {
    const before = await runsStored();
    const response = await post("/v1/runs", '{"script": {"hash": "sha256:', {
      ...h.auth,
      "content-type": "application/json",
    });
    expect(response.statusCode).toBe(422);
    expect(errorOf(response)).toEqual({
      code: "INVALID_INPUT",
      field: "body",
      message: expect.stringMatching(/^body: is not valid JSON \(.+\): send one JSON document/),
    });
    expect(await runsStored()).toBe(before);
  });

  it("a body that is not JSON at all says to send Content-Type: application/json", async () => {
    const response = await post("/v1/runs", "script=x", {
      ...h.auth,
      "content-type": "application/x-www-form-urlencoded",
    });
    expect(response.statusCode).toBe(422);
    expect(errorOf(response)).toMatchObject({ code: "INVALID_INPUT", field: "body" });
    expect(errorOf(response).message).toContain("Content-Type: application/json");
  });

  it("a missing body, a missing field, a wrong type and an unknown field each name the field", async () => {
    const cases: [unknown, string, RegExp][] = [
      [undefined, "body", /is missing: send a JSON object/],
      [{ input: 1 }, "body.script", /is required.*compiled script \{ entry, code, sourceMap \}/],
      [{ script: { entry: "a.ts", code: "x" } }, "body.script.sourceMap", /is required/],
      [{ script: { ...SCRIPT, code: 5 } }, "body.script.code", /expected string, received number/],
      [
        { script: SCRIPT, tooset: "shop" },
        "body.tooset",
        /not a field of this request: check its spelling/,
      ],
      [{ script: SCRIPT, seed: "abc" }, "body.seed", /64 lowercase hex digits.*omit it/],
      [{ script: SCRIPT, ttl: "soon" }, "body.ttl", /use a number and a unit/],
      [{ script: SCRIPT, ttl: 0 }, "body.ttl", /longer than 0/],
      [{ script: SCRIPT, toolset: "my tools!" }, "body.toolset", /must be a toolset name/],
      [
        { script: { hash: "md5:abc" } },
        "body.script.hash",
        /"sha256:" and 64 lowercase hex digits/,
      ],
    ];
    const before = await runsStored();
    for (const [payload, field, message] of cases) {
      const response =
        payload === undefined
          ? await h.app.inject({ method: "POST", url: "/v1/runs", headers: h.auth })
          : await post("/v1/runs", payload);
      expect(response.statusCode, JSON.stringify(payload)).toBe(422);
      const error = errorOf(response);
      expect(error.code).toBe("INVALID_INPUT");
      expect(error.field, JSON.stringify(payload)).toBe(field);
      expect(error.message, JSON.stringify(payload)).toMatch(message);
      expect(error.message.startsWith(`${field}: `)).toBe(true);
    }
    expect(await runsStored()).toBe(before);
    expect(h.rings).toEqual([]);
  });

  it("an unknown script hash is 422 and says to send the script itself", async () => {
    const response = await post("/v1/runs", { script: { hash: `sha256:${"e".repeat(64)}` } });
    expect(response.statusCode).toBe(422);
    expect(errorOf(response)).toMatchObject({ code: "INVALID_INPUT", field: "body.script.hash" });
    expect(errorOf(response).message).toContain(
      "send the compiled script itself as { entry, code, sourceMap }",
    );
    expect(h.rings).toEqual([]);
  });

  it("a 10 MB input is 413 PAYLOAD_TOO_LARGE and nothing is stored", async () => {
    const before = await runsStored();
    const response = await post("/v1/runs", {
      script: SCRIPT,
      input: { blob: "x".repeat(10 * 1024 * 1024) },
    });
    expect(response.statusCode).toBe(413);
    expect(errorOf(response)).toMatchObject({ code: "PAYLOAD_TOO_LARGE", field: "body" });
    expect(errorOf(response).message).toContain("pass large data by reference");
    expect(await runsStored()).toBe(before);
    expect(h.rings).toEqual([]);
  });

  it("query parameters are checked too: wait above 60s, a bad limit, an unknown status", async () => {
    const id = await startRun(h);
    const cases: [string, string, RegExp][] = [
      [`/v1/runs/${id}/result?wait=2m`, "query.wait", /at most 60s/],
      [`/v1/runs/${id}/result?wait=later`, "query.wait", /is not a duration/],
      [`/v1/runs/${id}/journal?after=-1`, "query.after", /journal seq/],
      [`/v1/runs/${id}/journal?format=xml`, "query.format", /json.*jsonl/],
      ["/v1/runs?limit=5000", "query.limit", /at most 500: page with `before`/],
      ["/v1/runs?status=done", "query.status", /queued/],
      ["/v1/runs?sort=asc", "query.sort", /not a field/],
    ];
    for (const [url, field, message] of cases) {
      const response = await h.app.inject({ url, headers: h.auth });
      expect(response.statusCode, url).toBe(422);
      expect(errorOf(response), url).toMatchObject({ code: "INVALID_INPUT", field });
      expect(errorOf(response).message, url).toMatch(message);
    }
  });
});

describe("tokens and namespaces", () => {
  it("a missing, malformed or unknown token is 401 with what to send", async () => {
    const before = await runsStored();
    const missing = await post("/v1/runs", { script: SCRIPT }, {});
    expect(missing.statusCode).toBe(401);
    expect(missing.headers["www-authenticate"]).toBe('Bearer realm="rewind"');
    expect(errorOf(missing)).toMatchObject({ code: "UNAUTHORIZED" });
    expect(errorOf(missing).message).toContain("Authorization: Bearer <token>");

    const malformed = await h.app.inject({
      url: "/v1/runs",
      headers: { authorization: "Token abc" },
    });
    expect(malformed.statusCode).toBe(401);
    expect(errorOf(malformed).message).toContain('not of the form "Bearer <token>"');

    const unknown = await h.app.inject({
      url: "/v1/runs",
      headers: { authorization: "Bearer rw_nope" },
    });
    expect(unknown.statusCode).toBe(401);
    expect(errorOf(unknown).message).toContain("unknown or revoked");
    expect(await runsStored()).toBe(before);
  });

  it("a run of another namespace is 404, exactly like a run that does not exist", async () => {
    const id = await startRun(h);
    h.rings.length = 0;
    const requests = [
      { url: `/v1/runs/${id}` },
      { url: `/v1/runs/${id}/journal` },
      { url: `/v1/runs/${id}/result` },
      {
        method: "POST" as const,
        url: `/v1/runs/${id}/signals/approval`,
        payload: { approved: true },
      },
      { method: "POST" as const, url: `/v1/runs/${id}/cancel` },
    ];
    for (const request of requests) {
      const theirs = await h.app.inject({ ...request, headers: h.otherAuth });
      expect(theirs.statusCode, request.url).toBe(404);
      expect(errorOf(theirs)).toEqual({
        code: "NOT_FOUND",
        message: `No run ${id} in this namespace: check the id (GET /v1/runs lists your runs)`,
      });
      const none = await h.app.inject({
        ...request,
        url: request.url.replace(id, "run_missing"),
        headers: h.auth,
      });
      expect(none.statusCode).toBe(404);
      expect(errorOf(none).message).toBe(errorOf(theirs).message.replace(id, "run_missing"));
    }
    expect(await h.store.pendingInbox(id)).toEqual([]);
    expect(h.rings).toEqual([]);
  });
});

describe("the rest", () => {
  it("a signal to a finished run is 409 CONFLICT naming its status", async () => {
    const id = await startRun(h);
    await completeRun(h.store, id);
    const response = await post(`/v1/runs/${id}/signals/approval`, { approved: true });
    expect(response.statusCode).toBe(409);
    expect(errorOf(response)).toEqual({
      code: "CONFLICT",
      message: `Run ${id} has already ended (status completed): signals go only to open runs (queued, running, waiting or quarantined)`,
    });
  });

  it("an unknown route is 404 pointing at the OpenAPI document", async () => {
    const response = await h.app.inject({ url: "/v1/rnus" });
    expect(response.statusCode).toBe(404);
    expect(errorOf(response)).toMatchObject({ code: "NOT_FOUND" });
    expect(errorOf(response).message).toContain("/v1/openapi.json");
  });

  it("a store failure is 503 UNAVAILABLE, without its message or stack", async () => {
    const logged: string[] = [];
    const failing = Object.create(h.store, {
      listRuns: {
        value: async () => Promise.reject(new Error("connection refused at 10.0.0.7:5432")),
      },
    });
    const { createApi } = await import("../src/index.js");
    const app = createApi({
      store: failing,
      doorbell: { ring() {} },
      version: "t",
      log: { error: (message) => void logged.push(message) },
    });
    try {
      const listed = await app.inject({ url: "/v1/runs", headers: h.auth });
      expect(listed.statusCode).toBe(503);
      expect(errorOf(listed).code).toBe("UNAVAILABLE");
      expect(listed.headers["retry-after"]).toBe("2");
      expect(listed.body).not.toContain("10.0.0.7");
      expect(listed.body).not.toMatch(/at .*\.ts:\d+/);
      const ready = await app.inject({ url: "/readyz" });
      expect(ready.statusCode).toBe(503);
      expect(errorOf(ready).message).toContain("check DATABASE_URL");
      expect(logged).toHaveLength(2);
    } finally {
      await app.close();
    }
  });

  it("a doorbell that fails does not fail the request: the run is stored and the failure logged", async () => {
    const logged: string[] = [];
    const { createApi } = await import("../src/index.js");
    const app = createApi({
      store: h.store,
      doorbell: { ring: async () => Promise.reject(new Error("redis down")) },
      version: "t",
      log: { error: (message) => void logged.push(message) },
    });
    try {
      const response = await app.inject({
        method: "POST",
        url: "/v1/runs",
        headers: h.auth,
        payload: { script: SCRIPT },
      });
      expect(response.statusCode).toBe(201);
      expect(await h.store.getRun(response.json().id)).toBeDefined();
      expect(logged[0]).toContain("the reconciler will ring it again");
    } finally {
      await app.close();
    }
  });
});
