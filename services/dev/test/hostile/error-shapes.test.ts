/**
 * Requests a hostile client sends to break the API's answers: every refusal is the API's own
 * `{ error: { code, message } }`, states the limit it hit, and names what to fix.
 */
import { connect } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openHostilePlatform, type HostilePlatform } from "./harness.js";

let h: HostilePlatform;
beforeAll(async () => {
  h = await openHostilePlatform();
});
afterAll(async () => h.close());
afterEach(async () => h.check());

/** Sends raw bytes and returns the status and the parsed body of the answer. */
function raw(request: string): Promise<{ status: number; headers: string; body: any }> {
  const { hostname, port } = new URL(h.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = "";
    socket.on("data", (chunk) => (text += chunk.toString("utf8")));
    socket.on("error", () => {}); // the server closes the connection after answering
    socket.on("close", () => {
      const [head = "", body = ""] = text.split("\r\n\r\n");
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
      try {
        resolve({ status, headers: head, body: JSON.parse(body) });
      } catch {
        reject(new Error(`not a JSON answer: ${text.slice(0, 300)}`));
      }
    });
    socket.write(request);
  });
}

function expectErrorShape(body: any, code: string) {
  expect(Object.keys(body)).toEqual(["error"]);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
  expect(body).not.toHaveProperty("statusCode");
}

describe("refusals in the API's own shape", () => {
  it("a body over the limit is 413 and states the limit", async () => {
    const response = await fetch(`${h.url}/v1/runs`, {
      method: "POST",
      headers: { ...h.auth, "content-type": "application/json" },
      body: JSON.stringify({ script: h.honest, input: "x".repeat(9 * 1024 * 1024) }),
    });
    expect(response.status).toBe(413);
    const body = (await response.json()) as any;
    expectErrorShape(body, "PAYLOAD_TOO_LARGE");
    expect(body.error.message).toContain("8 MiB (8388608 bytes)");
  });

  it("headers over Node's limit are 431 in the API's shape, stating the limit", async () => {
    const answer = await raw(
      `GET /v1/runs HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
    );
    expect(answer.status).toBe(431);
    expectErrorShape(answer.body, "HEADERS_TOO_LARGE");
    expect(answer.body.error.message).toContain("16384 bytes");
  });

  it("a request that is not HTTP is 400 in the API's shape", async () => {
    const answer = await raw("HELLO\r\n\r\n");
    expect(answer.status).toBe(400);
    expectErrorShape(answer.body, "BAD_REQUEST");
  });

  it("a broken %-escape in the URL is 400 naming the url", async () => {
    const response = await fetch(`${h.url}/v1/runs/%E0%A4%A`, { headers: h.auth });
    expect(response.status).toBe(400);
    const body = (await response.json()) as any;
    expectErrorShape(body, "BAD_REQUEST");
    expect(body.error.field).toBe("url");
  });

  it("a path parameter over 256 characters is 414 in the API's shape", async () => {
    const response = await fetch(`${h.url}/v1/runs/${"r".repeat(300)}`, { headers: h.auth });
    expect(response.status).toBe(414);
    const body = (await response.json()) as any;
    expectErrorShape(body, "URI_TOO_LONG");
  });

  it("a wrong method on a known path is 405 with Allow, not 404", async () => {
    const deleted = await fetch(`${h.url}/v1/runs`, { method: "DELETE", headers: h.auth });
    expect(deleted.status).toBe(405);
    expect(deleted.headers.get("allow")).toBe("GET, HEAD, POST");
    expectErrorShape(await deleted.json(), "METHOD_NOT_ALLOWED");

    const got = await fetch(`${h.url}/v1/runs/run_x/cancel`, { headers: h.auth });
    expect(got.status).toBe(405);
    expect(got.headers.get("allow")).toBe("POST");

    const unknown = await fetch(`${h.url}/v1/nothing`, { method: "DELETE", headers: h.auth });
    expect(unknown.status).toBe(404);
  });

  it("a __proto__ key is refused naming the field", async () => {
    for (const [payload, field] of [
      [
        `{"script":{"hash":"sha256:${"0".repeat(64)}"},"input":{"a":[1,{"__proto__":{"x":1}}]}}`,
        "body.input.a.1.__proto__",
      ],
      [`{"input":{"constructor":{"prototype":{}}}}`, "body.input.constructor.prototype"],
    ] as const) {
      const response = await fetch(`${h.url}/v1/runs`, {
        method: "POST",
        headers: { ...h.auth, "content-type": "application/json" },
        body: payload,
      });
      expect(response.status).toBe(422);
      const body = (await response.json()) as any;
      expectErrorShape(body, "INVALID_INPUT");
      expect(body.error.field).toBe(field);
      expect(body.error.message).toContain("rename the key");
    }
  });
});
