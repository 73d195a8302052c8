import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openHarness, type Harness } from "./harness.js";

/*
 * /v1/webhooks on the embedded store: endpoint URLs checked against the SSRF policy (the field
 * named), scopes (operate manages, read lists, no secret shown to a reader), namespaces apart,
 * rotation, the delivery log. Sending is the projector's (services/projector/test).
 */

let h: Harness;
beforeAll(async () => {
  h = await openHarness({ webhookAllow: "127.0.0.1" });
});
afterAll(async () => h.close());

const create = (payload: Record<string, unknown>, headers = h.auth) =>
  h.app.inject({ method: "POST", url: "/v1/webhooks", headers, payload });

describe("/v1/webhooks", () => {
  it("refuses private, link-local and malformed URLs, naming the field", async () => {
    for (const [url, message] of [
      ["http://10.0.0.7/hook", "10.0.0.7 is a private address"],
      ["http://169.254.169.254/latest", "link-local"],
      ["http://[::1]:8080/", "loopback"],
      ["http://0.0.0.0/", "unspecified"],
      ["file:///etc/passwd", "must be http: or https:"],
      ["not a url", "is not a URL"],
    ] as const) {
      const response = await create({ url });
      expect(response.statusCode, url).toBe(422);
      expect(response.json().error.field).toBe("url");
      expect(response.json().error.message).toContain(message);
    }
    const badEvent = await create({ url: "http://127.0.0.1:7232/", events: ["run.exploded"] });
    expect(badEvent.statusCode).toBe(422);
    expect(badEvent.json().error.message).toMatch(/events/);
  });

  it("creates, lists, rotates and removes; operate manages, read only lists", async () => {
    const made = await create({
      url: "http://127.0.0.1:7232/hook",
      events: ["run.completed", "run.failed"],
      description: "ops",
    });
    expect(made.statusCode).toBe(201);
    const endpoint = made.json();
    expect(endpoint.id).toMatch(/^wh_[0-9a-f]{16}$/);
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(endpoint.events).toEqual(["run.completed", "run.failed"]);

    const reader = await h.store.createToken("acme", "viewer", ["read"]);
    const asReader = { authorization: `Bearer ${reader}` };
    const listed = await h.app.inject({ method: "GET", url: "/v1/webhooks", headers: asReader });
    expect(listed.statusCode).toBe(200);
    expect(listed.json().endpoints.map((e: { id: string }) => e.id)).toEqual([endpoint.id]);
    expect(JSON.stringify(listed.json())).not.toContain("whsec_");
    for (const [method, url] of [
      ["GET", `/v1/webhooks/${endpoint.id}/secret`],
      ["DELETE", `/v1/webhooks/${endpoint.id}`],
      ["POST", `/v1/webhooks/${endpoint.id}/rotate`],
    ] as const) {
      const refused = await h.app.inject({ method, url, headers: asReader });
      expect(refused.statusCode, `${method} ${url}`).toBe(403);
    }
    expect((await create({ url: "http://127.0.0.1:7232/" }, asReader)).statusCode).toBe(403);

    // Another namespace sees nothing of it.
    const other = await h.app.inject({
      method: "GET",
      url: `/v1/webhooks/${endpoint.id}`,
      headers: h.otherAuth,
    });
    expect(other.statusCode).toBe(404);

    const rotated = await h.app.inject({
      method: "POST",
      url: `/v1/webhooks/${endpoint.id}/rotate`,
      headers: h.auth,
      payload: { keepPrevious: "1h" },
    });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json().secret).not.toBe(endpoint.secret);
    expect(Date.parse(rotated.json().previousSecretUntil)).toBeGreaterThan(Date.now());
    const tooLong = await h.app.inject({
      method: "POST",
      url: `/v1/webhooks/${endpoint.id}/rotate`,
      headers: h.auth,
      payload: { keepPrevious: "30d" },
    });
    expect(tooLong.statusCode).toBe(422);
    expect(tooLong.json().error.field).toBe("keepPrevious");

    const disabled = await h.app.inject({
      method: "POST",
      url: `/v1/webhooks/${endpoint.id}/disable`,
      headers: h.auth,
    });
    expect(disabled.json()).toMatchObject({ enabled: false, disabledReason: "disabled by test" });
    const log = await h.app.inject({
      method: "GET",
      url: `/v1/webhooks/${endpoint.id}/deliveries?limit=10`,
      headers: asReader,
    });
    expect(log.json()).toEqual({ deliveries: [] });

    const removed = await h.app.inject({
      method: "DELETE",
      url: `/v1/webhooks/${endpoint.id}`,
      headers: h.auth,
    });
    expect(removed.statusCode).toBe(200);
    const gone = await h.app.inject({
      method: "GET",
      url: `/v1/webhooks/${endpoint.id}`,
      headers: h.auth,
    });
    expect(gone.statusCode).toBe(404);
  });

  it("lists the routes in the OpenAPI document with their scopes", async () => {
    const doc = (await h.app.inject({ method: "GET", url: "/v1/openapi.json" })).json();
    expect(doc.paths["/v1/webhooks"].post["x-rewind-scope"]).toBe("operate");
    expect(doc.paths["/v1/webhooks"].get["x-rewind-scope"]).toBe("read");
    expect(doc.paths["/v1/webhooks/{id}"].delete["x-rewind-scope"]).toBe("operate");
    expect(doc.paths["/v1/webhooks/{id}/deliveries/{delivery}/redeliver"].post).toBeDefined();
  });
});
