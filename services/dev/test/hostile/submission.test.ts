/**
 * Submissions that used to be stored and then retried into CRASH_LOOP ("most likely the script
 * exhausted the sandbox's memory"), or answered as a retryable 503: each is refused by
 * POST /v1/runs with a 4xx naming the field, and nothing is stored.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openHostilePlatform, type HostilePlatform } from "./harness.js";

let h: HostilePlatform;
beforeAll(async () => {
  h = await openHostilePlatform();
});
afterAll(async () => h.close());
afterEach(async () => h.check());

async function post(path: string, body: string) {
  const response = await fetch(`${h.url}${path}`, {
    method: "POST",
    headers: { ...h.auth, "content-type": "application/json" },
    body,
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function runsStored(): Promise<number> {
  return (await h.platform.store.listRuns({ namespace: "default", limit: 10_000 })).length;
}

/** `[[[…1…]]]`, `depth` arrays deep, as text (JSON.stringify would overflow the test's stack). */
const nested = (depth: number) => `${"[".repeat(depth)}1${"]".repeat(depth)}`;

describe("refused at submission, naming the field", () => {
  it("a script with a syntax error is 422 COMPILE_ERROR naming body.script.code and the line", async () => {
    const before = await runsStored();
    const script = { ...h.honest, code: `${h.honest.code}\n}{` };
    const answer = await post("/v1/runs", JSON.stringify({ script }));
    expect(answer.status).toBe(422);
    expect(answer.body.error).toMatchObject({ code: "COMPILE_ERROR", field: "body.script.code" });
    expect(answer.body.error.message).toMatch(/does not compile at line \d+ .*SyntaxError/);
    expect(await runsStored()).toBe(before);
  });

  it("a broken source map is 422 naming body.script.sourceMap", async () => {
    for (const sourceMap of ["{not json", '{"version":3,"sources":["a.ts"],"mappings":"!!"}']) {
      const answer = await post("/v1/runs", JSON.stringify({ script: { ...h.honest, sourceMap } }));
      expect(answer.status, sourceMap).toBe(422);
      expect(answer.body.error).toMatchObject({
        code: "INVALID_INPUT",
        field: "body.script.sourceMap",
      });
    }
  });

  it("NUL characters in the script are 422 naming the field, not a retryable 503", async () => {
    for (const key of ["code", "entry", "sourceMap"] as const) {
      const script = { ...h.honest, [key]: `${h.honest[key]}\u0000` };
      const answer = await post("/v1/runs", JSON.stringify({ script }));
      expect(answer.status, key).toBe(422);
      expect(answer.body.error).toMatchObject({
        code: "INVALID_INPUT",
        field: `body.script.${key}`,
      });
      expect(answer.body.error.message).toContain("NUL");
    }
    const signal = await fetch(`${h.url}/v1/runs/run_x/signals/a%00b`, {
      method: "POST",
      headers: h.auth,
    });
    expect(signal.status).toBe(422);
    expect(((await signal.json()) as any).error.field).toBe("params.name");
  });

  it("an input over the value limit is 413 naming body.input and the limit", async () => {
    const input = "x".repeat(5 * 1024 * 1024);
    const answer = await post("/v1/runs", JSON.stringify({ script: h.honest, input }));
    expect(answer.status).toBe(413);
    expect(answer.body.error).toMatchObject({ code: "PAYLOAD_TOO_LARGE", field: "body.input" });
    expect(answer.body.error.message).toContain("4 MiB (4194304 bytes)");
  });

  it("nesting a run cannot carry is 422 stating the limit; 1,000 deep is carried through", async () => {
    for (const depth of [5_000, 100_000]) {
      const answer = await post(
        "/v1/runs",
        `{"script":${JSON.stringify(h.honest)},"input":${nested(depth)}}`,
      );
      expect(answer.status, String(depth)).toBe(422);
      expect(answer.body.error).toMatchObject({ code: "INVALID_INPUT", field: "body.input" });
      expect(answer.body.error.message).toContain("more than 1000 arrays or objects deep");
    }
    const { api } = h;
    const ok = await post(
      "/v1/runs",
      `{"script":${JSON.stringify(h.honest)},"input":{"n":${nested(998)}}}`,
    );
    expect(ok.status).toBe(201);
    h.runs.add(ok.body.id);
    // The honest script doubles input.n: an array doubles to NaN, which is null in JSON.
    expect(await api.runs.result(ok.body.id, "20s")).toMatchObject({ status: "completed" });
  });

  it("a signal's payload over the value limit is 413 naming the body", async () => {
    const answer = await post("/v1/runs/run_x/signals/go", JSON.stringify("x".repeat(5 << 20)));
    expect(answer.status).toBe(413);
    expect(answer.body.error).toMatchObject({ code: "PAYLOAD_TOO_LARGE", field: "body" });
  });
});
