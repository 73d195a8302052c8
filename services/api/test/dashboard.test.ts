/**
 * The API serves the dashboard: `/` stays JSON for API clients and sends browsers to
 * /dashboard/; an API built with `dashboard: false` serves neither.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openHarness, type Harness } from "./harness.js";

const BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8";

let h: Harness;
let bare: Harness;
beforeAll(async () => {
  h = await openHarness();
  bare = await openHarness({ dashboard: false });
});
afterAll(async () => {
  await h?.close();
  await bare?.close();
});

describe("GET /", () => {
  it("redirects a browser asking for text/html to the dashboard", async () => {
    for (const accept of [BROWSER, "text/html", "application/json;q=0.5, text/html"]) {
      const response = await h.app.inject({ url: "/", headers: { accept } });
      expect(response.statusCode, accept).toBe(302);
      expect(response.headers.location).toBe("/dashboard/");
      expect(response.headers.vary).toBe("Accept");
    }
  });

  it("answers JSON, with the dashboard's address, to every other client", async () => {
    for (const accept of [
      undefined,
      "*/*",
      "application/json",
      "application/json, text/html;q=0.5",
      "text/html;q=0",
    ]) {
      const response = await h.app.inject({
        url: "/",
        headers: accept === undefined ? {} : { accept },
      });
      expect(response.statusCode, accept).toBe(200);
      expect(response.headers["content-type"]).toMatch(/^application\/json/);
      expect(response.json()).toEqual({
        name: "rewind",
        version: "0.0.0-test",
        api: "/v1",
        openapi: "/v1/openapi.json",
        dashboard: "/dashboard/",
      });
    }
  });

  it("documents the pointer and the redirect in the OpenAPI document", async () => {
    const doc = (await h.app.inject({ url: "/v1/openapi.json" })).json();
    const root = doc.paths["/"].get;
    expect(
      root.responses["200"].content["application/json"].schema.properties.dashboard,
    ).toMatchObject({ type: "string" });
    expect(root.responses["302"].headers.Location).toBeDefined();
  });
});

describe("the dashboard inside the API", () => {
  it("is served without a token, as HTML and JavaScript", async () => {
    const page = await h.app.inject({ url: "/dashboard/" });
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    const script = await h.app.inject({ url: "/dashboard/main.js" });
    expect(script.headers["content-type"]).toBe("text/javascript; charset=utf-8");
  });

  it("is absent from an API built without it: / is JSON for everyone and /dashboard/ is the API's 404", async () => {
    const root = await bare.app.inject({ url: "/", headers: { accept: BROWSER } });
    expect(root.statusCode).toBe(200);
    expect(root.json().dashboard).toBeUndefined();
    const page = await bare.app.inject({ url: "/dashboard/" });
    expect(page.statusCode).toBe(404);
    expect(page.json().error.code).toBe("NOT_FOUND");
  });
});
