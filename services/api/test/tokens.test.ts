import Fastify from "fastify";
import { tokenIdOf } from "@rewind/store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerRoute, type Route } from "../src/route.js";
import type { ApiContext } from "../src/context.js";
import { SCRIPT, openHarness, startRun, type Harness } from "./harness.js";

let h: Harness;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h.close());

describe("token scopes", () => {
  it("a read token reads, and is refused a start with 403 naming the scope it lacks", async () => {
    const id = await startRun(h);
    const reader = await h.store.createToken("acme", "viewer", ["read"]);
    const got = await h.app.inject({
      method: "GET",
      url: `/v1/runs/${id}`,
      headers: bearer(reader),
    });
    expect(got.statusCode).toBe(200);
    const start = await h.app.inject({
      method: "POST",
      url: "/v1/runs",
      headers: bearer(reader),
      payload: { script: SCRIPT, input: {} },
    });
    expect(start.statusCode).toBe(403);
    expect(start.json().error.code).toBe("FORBIDDEN");
    expect(start.json().error.message).toContain(`lacks the scope "run"`);
    expect(start.json().error.message).toContain("rewind token create --scope run");
    const cancel = await h.app.inject({
      method: "POST",
      url: `/v1/runs/${id}/cancel`,
      headers: bearer(reader),
    });
    expect(cancel.statusCode).toBe(403);
  });

  it("a run token steers runs but cannot act on quarantine or tokens", async () => {
    const runner = await h.store.createToken("acme", "ci", ["read", "run"]);
    const id = await startRun(h);
    const signal = await h.app.inject({
      method: "POST",
      url: `/v1/runs/${id}/signals/go`,
      headers: bearer(runner),
      payload: {},
    });
    expect(signal.statusCode).toBe(202);
    for (const [method, url] of [
      ["POST", `/v1/quarantine/${id}/give-up`],
      ["GET", "/v1/tokens"],
      ["POST", `/v1/tokens/${tokenIdOf(runner)}/revoke`],
    ] as const) {
      const response = await h.app.inject({ method, url, headers: bearer(runner), payload: {} });
      expect(response.statusCode, `${method} ${url}`).toBe(403);
      expect(response.json().error.message).toContain(`"operate"`);
    }
  });

  it("a metrics token reaches /metrics and nothing else", async () => {
    const scraper = await h.store.createToken("acme", "prometheus", ["metrics"]);
    const metrics = await h.app.inject({
      method: "GET",
      url: "/metrics",
      headers: bearer(scraper),
    });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toContain("rewind_api_requests_total");
    const runs = await h.app.inject({ method: "GET", url: "/v1/runs", headers: bearer(scraper) });
    expect(runs.statusCode).toBe(403);
    // Without a token, or with one lacking the scope, /metrics is refused.
    const open = await h.app.inject({ method: "GET", url: "/metrics" });
    expect(open.statusCode).toBe(401);
    const full = await h.app.inject({ method: "GET", url: "/metrics", headers: h.auth });
    expect(full.statusCode).toBe(403);
    expect(full.json().error.message).toContain(`"metrics"`);
  });

  it("every route of the OpenAPI document says which scope it needs, or is public", async () => {
    const doc = (await h.app.inject({ method: "GET", url: "/v1/openapi.json" })).json();
    const seen: string[] = [];
    for (const [path, ops] of Object.entries<
      Record<string, { security?: unknown; "x-rewind-scope"?: string }>
    >(doc.paths))
      for (const [method, op] of Object.entries(ops)) {
        seen.push(`${method.toUpperCase()} ${path} ${op["x-rewind-scope"] ?? "public"}`);
        if (op.security !== undefined)
          expect(op["x-rewind-scope"]).toMatch(/^(read|run|operate|metrics)$/);
      }
    expect(seen).toEqual(
      expect.arrayContaining([
        "GET /healthz public",
        "POST /v1/runs run",
        "GET /v1/runs read",
        "POST /v1/quarantine/{id}/release operate",
        "GET /v1/tokens operate",
      ]),
    );
  });

  it("a route that declares no access is refused at registration, never served open", () => {
    const app = Fastify();
    const route = {
      method: "GET",
      path: "/v1/undeclared",
      operationId: "undeclared",
      summary: "no access declared",
      responses: {},
      errors: [],
      handle: async () => ({ ok: true }),
    } as unknown as Route;
    expect(() => registerRoute(app, route, {} as ApiContext)).toThrow(/declares no access/);
  });
});

describe("/v1/tokens", () => {
  it("creates, lists (never a plaintext) and revokes the namespace's tokens", async () => {
    const created = await h.app.inject({
      method: "POST",
      url: "/v1/tokens",
      headers: h.auth,
      payload: { label: "deploy bot", scopes: ["read"] },
    });
    expect(created.statusCode).toBe(201);
    const made = created.json();
    expect(made).toMatchObject({
      namespace: "acme",
      label: "deploy bot",
      scopes: ["read"],
      revokedAt: null,
    });
    expect(made.id).toBe(tokenIdOf(made.token));
    const ok = await h.app.inject({ method: "GET", url: "/v1/runs", headers: bearer(made.token) });
    expect(ok.statusCode).toBe(200);

    const listed = await h.app.inject({ method: "GET", url: "/v1/tokens", headers: h.auth });
    expect(listed.statusCode).toBe(200);
    expect(listed.body).not.toContain(made.token);
    const ids = listed.json().tokens.map((t: { id: string }) => t.id);
    expect(ids).toContain(made.id);
    // Only this namespace's: "other"'s token is not listed.
    for (const t of listed.json().tokens) expect(t.namespace).toBe("acme");

    const revoked = await h.app.inject({
      method: "POST",
      url: `/v1/tokens/${made.id}/revoke`,
      headers: h.auth,
    });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().revokedAt).not.toBeNull();
    const after = await h.app.inject({
      method: "GET",
      url: "/v1/runs",
      headers: bearer(made.token),
    });
    expect(after.statusCode).toBe(401);
  });

  it("refuses scopes the caller lacks, unknown scopes, and other namespaces' tokens", async () => {
    const beyond = await h.app.inject({
      method: "POST",
      url: "/v1/tokens",
      headers: h.auth,
      payload: { label: "scraper", scopes: ["metrics"] },
    });
    expect(beyond.statusCode).toBe(403);
    expect(beyond.json().error.message).toContain(`lacks "metrics"`);
    const unknown = await h.app.inject({
      method: "POST",
      url: "/v1/tokens",
      headers: h.auth,
      payload: { label: "x", scopes: ["admin"] },
    });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().error.message).toContain("scopes");
    const theirs = await h.store.createToken("other", "theirs");
    const cross = await h.app.inject({
      method: "POST",
      url: `/v1/tokens/${tokenIdOf(theirs)}/revoke`,
      headers: h.auth,
    });
    expect(cross.statusCode).toBe(404);
    expect(await h.store.authenticate(theirs)).toBe("other");
    const malformed = await h.app.inject({
      method: "POST",
      url: "/v1/tokens/not-an-id/revoke",
      headers: h.auth,
    });
    expect(malformed.statusCode).toBe(422);
  });
});
