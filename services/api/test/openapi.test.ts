import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCRIPT, completeRun, openHarness, startRun, type Harness } from "./harness.js";
import { responseContract } from "./response-contract.js";

let h: Harness;
let doc: any;
beforeAll(async () => {
  h = await openHarness();
  const response = await h.app.inject({ url: "/v1/openapi.json" });
  expect(response.statusCode).toBe(200);
  doc = JSON.parse(response.body);
});
afterAll(async () => h.close());

describe("GET /v1/openapi.json", () => {
  it("is an OpenAPI 3.1 document listing every endpoint", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info).toMatchObject({ title: "Rewind API", version: "0.0.0-test" });
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods as object).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual(
      [
        "GET /",
        "GET /healthz",
        "GET /readyz",
        "GET /v1/openapi.json",
        "POST /v1/runs",
        "GET /v1/runs",
        "GET /v1/runs/{id}",
        "GET /v1/runs/{id}/journal",
        "GET /v1/runs/{id}/result",
        "GET /v1/runs/{id}/script",
        "GET /v1/runs/{id}/values/{ref}",
        "POST /v1/runs/{id}/signals/{name}",
        "POST /v1/runs/{id}/cancel",
        "POST /v1/runs/{id}/fork",
        "POST /v1/runs/{id}/replay",
        "POST /v1/replay",
        "POST /v1/scripts/compile",
        "GET /v1/token",
        "GET /v1/quarantine",
        "GET /v1/quarantine/{id}",
        "POST /v1/quarantine/{id}/release",
        "POST /v1/quarantine/{id}/give-up",
        "GET /v1/epochs",
        "POST /v1/epochs/{epoch}/migrate",
        "GET /v1/epochs/checks/{id}",
        "GET /v1/tokens",
        "POST /v1/tokens",
        "POST /v1/tokens/{id}/revoke",
        "GET /v1/limits",
        "POST /v1/limits",
        "GET /v1/codec",
        "POST /v1/codec",
        "GET /v1/capture-policy",
        "PUT /v1/capture-policy",
        "POST /v1/webhooks",
        "GET /v1/webhooks",
        "GET /v1/webhooks/{id}",
        "DELETE /v1/webhooks/{id}",
        "GET /v1/webhooks/{id}/secret",
        "POST /v1/webhooks/{id}/rotate",
        "POST /v1/webhooks/{id}/enable",
        "POST /v1/webhooks/{id}/disable",
        "GET /v1/webhooks/{id}/deliveries",
        "GET /v1/webhooks/{id}/deliveries/{delivery}",
        "POST /v1/webhooks/{id}/deliveries/{delivery}/redeliver",
        "GET /metrics",
      ].sort(),
    );
  });

  it("documents parameters, bodies, auth and errors", () => {
    const create = doc.paths["/v1/runs"].post;
    expect(create.security).toEqual([{ bearer: [] }]);
    const body = create.requestBody.content["application/json"].schema;
    expect(body.required).toEqual(["script"]);
    expect(Object.keys(body.properties).sort()).toEqual([
      "idempotencyKey",
      "input",
      "script",
      "seed",
      "toolset",
      "ttl",
    ]);
    expect(body.properties.script.anyOf).toHaveLength(2);
    expect(Object.keys(create.responses).sort()).toEqual([
      "200",
      "201",
      "401",
      "403",
      "409",
      "413",
      "422",
      "429",
      "503",
    ]);
    expect(create["x-rewind-scope"]).toBe("run");
    expect(create.responses["422"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/Error",
    });

    // The runs list's filters (issue 15), each documented with what it does.
    const list = doc.paths["/v1/runs"].get;
    expect(list.parameters.map((p: any) => `${p.in}:${p.name}`).sort()).toEqual(
      [
        "after",
        "before",
        "counts",
        "createdFrom",
        "createdTo",
        "epoch",
        "fork",
        "limit",
        "order",
        "parent",
        "q",
        "script",
        "status",
        "toolset",
      ].map((name) => `query:${name}`),
    );
    for (const name of ["script", "toolset", "epoch", "createdFrom", "parent", "fork", "q"])
      expect(
        list.parameters.find((p: any) => p.name === name).description ??
          list.parameters.find((p: any) => p.name === name).schema.description,
        name,
      ).toMatch(/\w/);

    const signal = doc.paths["/v1/runs/{id}/signals/{name}"].post;
    expect(signal.parameters.map((p: any) => [p.name, p.in, p.required])).toEqual([
      ["id", "path", true],
      ["name", "path", true],
    ]);
    expect(signal.responses["409"]).toBeDefined();
    const journal = doc.paths["/v1/runs/{id}/journal"].get;
    expect(journal.parameters.map((p: any) => `${p.in}:${p.name}`)).toEqual([
      "path:id",
      "query:after",
      "query:format",
      "query:limit",
      "query:values",
      "query:wait",
    ]);
    expect(Object.keys(journal.responses["200"].content)).toEqual([
      "application/json",
      "application/x-ndjson",
      "text/event-stream",
    ]);
    expect(doc.paths["/healthz"].get.security).toBeUndefined();
  });

  it("fails a test whose response the document does not describe (the harness checks each)", () => {
    const contract = responseContract(doc);
    const run = '{"id":"run_1","status":"queued","scriptHash":"sha256:x"}';
    expect(() => contract.check("POST", "/v1/runs", 201, "application/json", run)).not.toThrow();
    expect(() =>
      contract.check("POST", "/v1/runs", 201, "application/json", '{"id":"run_1"}'),
    ).toThrow(/POST \/v1\/runs answered 201 with a body \/v1\/openapi.json does not describe/);
    expect(() => contract.check("GET", "/v1/runs/run_1", 418, "application/json", "{}")).toThrow(
      /a status \/v1\/openapi.json does not list for it/,
    );
    expect(() =>
      contract.check("GET", "/v1/runs/run_1", 404, "application/json", '{"error":{}}'),
    ).toThrow(/does not describe/);
  });

  it("describes what the API really answers (responses validate against the document)", async () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    ajv.addSchema({ $id: "doc", components: doc.components }, "doc");
    const check = (path: string, method: string, status: number, body: unknown) => {
      let schema =
        doc.paths[path][method].responses[String(status)].content["application/json"].schema;
      if (schema.$ref) schema = { $ref: `doc${schema.$ref}` };
      const validate = ajv.compile(schema);
      expect(
        validate(body),
        `${method} ${path} ${status}: ${ajv.errorsText(validate.errors)}`,
      ).toBe(true);
    };
    const created = await h.app.inject({
      method: "POST",
      url: "/v1/runs",
      headers: h.auth,
      payload: { script: SCRIPT },
    });
    check("/v1/runs", "post", 201, created.json());
    const id = created.json().id;
    await completeRun(h.store, id, { n: 1 });
    await startRun(h);
    check(
      "/v1/runs",
      "get",
      200,
      (await h.app.inject({ url: "/v1/runs", headers: h.auth })).json(),
    );
    check(
      "/v1/runs/{id}",
      "get",
      200,
      (await h.app.inject({ url: `/v1/runs/${id}`, headers: h.auth })).json(),
    );
    check(
      "/v1/runs/{id}/journal",
      "get",
      200,
      (await h.app.inject({ url: `/v1/runs/${id}/journal`, headers: h.auth })).json(),
    );
    check(
      "/v1/runs/{id}/result",
      "get",
      200,
      (await h.app.inject({ url: `/v1/runs/${id}/result`, headers: h.auth })).json(),
    );
    const open = await startRun(h);
    const signal = await h.app.inject({
      method: "POST",
      url: `/v1/runs/${open}/signals/go`,
      headers: h.auth,
    });
    check("/v1/runs/{id}/signals/{name}", "post", 202, signal.json());
    const conflict = await h.app.inject({
      method: "POST",
      url: `/v1/runs/${id}/cancel`,
      headers: h.auth,
    });
    check("/v1/runs/{id}/cancel", "post", 409, conflict.json());
    check("/", "get", 200, (await h.app.inject({ url: "/" })).json());
    const policy = await h.app.inject({
      method: "PUT",
      url: "/v1/capture-policy",
      headers: h.auth,
      payload: { toolset: "shop", fields: ["$.card.number"], detectors: ["email"] },
    });
    check("/v1/capture-policy", "put", 200, policy.json());
    const read = await h.app.inject({ url: "/v1/capture-policy?toolset=shop", headers: h.auth });
    expect(read.json()).toMatchObject({ toolset: "shop", fields: ["$.card.number"] });
    check("/v1/capture-policy", "get", 200, read.json());
    const bad = await h.app.inject({
      method: "PUT",
      url: "/v1/capture-policy",
      headers: h.auth,
      payload: { fields: ["$.a..", "$.b"] },
    });
    check("/v1/capture-policy", "put", 422, bad.json());
    expect(bad.json().error).toMatchObject({ code: "INVALID_INPUT", field: "body.fields.0" });
  });

  it("documents the capture policy: read to view, operate to change, the run's replayability", () => {
    const policy = doc.paths["/v1/capture-policy"];
    expect(policy.get["x-rewind-scope"]).toBe("read");
    expect(policy.put["x-rewind-scope"]).toBe("operate");
    expect(policy.get.parameters.map((p: any) => `${p.in}:${p.name}`)).toEqual(["query:toolset"]);
    const body = policy.put.requestBody.content["application/json"].schema;
    expect(Object.keys(body.properties).sort()).toEqual([
      "detectors",
      "fields",
      "patterns",
      "toolset",
    ]);
    expect(body.properties.detectors.items.enum).toEqual([
      "card-number",
      "bearer-token",
      "api-key",
      "jwt",
      "email",
    ]);
    expect(doc.paths["/v1/runs/{id}/fork"].post.responses["409"]).toBeDefined();
    const run = JSON.stringify(
      doc.paths["/v1/runs/{id}"].get.responses["200"].content["application/json"].schema,
    );
    expect(run).toContain("not-strict");
    expect(run).toContain("firstRedacted");
  });
});

describe("health", () => {
  it("GET /healthz, /readyz and / answer without a token", async () => {
    expect((await h.app.inject({ url: "/healthz" })).json()).toEqual({ ok: true });
    const ready = await h.app.inject({ url: "/readyz" });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ ok: true });
    expect((await h.app.inject({ url: "/" })).json()).toEqual({
      name: "rewind",
      version: "0.0.0-test",
      api: "/v1",
      openapi: "/v1/openapi.json",
      dashboard: "/dashboard/",
    });
  });
});

describe("GET /metrics", () => {
  it("serves Prometheus metrics named rewind_*, counting API requests by route, never by run id", async () => {
    const h = await openHarness();
    try {
      const id = await startRun(h);
      await h.app.inject({ url: `/v1/runs/${id}`, headers: h.auth });
      const scraper = await h.store.createToken("acme", "prometheus", ["metrics"]);
      const response = await h.app.inject({
        url: "/metrics",
        headers: { authorization: `Bearer ${scraper}` },
      });
      expect(response.statusCode).toBe(200);
      expect(response.headers["content-type"]).toContain("text/plain");
      expect(response.body).toMatch(
        /rewind_api_requests_total\{route="\/v1\/runs\/:id",status="200"\} \d+/,
      );
      expect(response.body).toContain("rewind_executor_commit_duration_seconds");
      expect(response.body).not.toContain(id);
    } finally {
      await h.close();
    }
  }, 90_000);
});
