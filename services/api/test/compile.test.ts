/**
 * POST /v1/scripts/compile: a multi-file script sent as text compiles with rewind's compiler,
 * reading no file of the server; hostile imports, bad names and oversized scripts are refused
 * with what to do; scopes apply. And GET /v1/token, which tells the dashboard what it may offer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_SCRIPT_FILES, MAX_SCRIPT_SOURCE_BYTES } from "@rewind/contract";
import { appendAsExecutor, openHarness, type Harness } from "./harness.js";

const FILES = {
  "main.ts": `import { tools } from "rewind";
import { price } from "./lib/price";
export default async function main(input: { n: number }) {
  return tools.charge({ cents: price(input.n) });
}
`,
  "lib/price.ts": `export const price = (n: number): number => n * 600;\n`,
};

let h: Harness;
beforeAll(async () => {
  h = await openHarness();
}, 60_000);
afterAll(() => h?.close());

const compile = (payload: unknown, headers: Record<string, string> = h.auth) =>
  h.app.inject({
    method: "POST",
    url: "/v1/scripts/compile",
    headers,
    payload: payload as object,
  });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe("POST /v1/scripts/compile", () => {
  it("compiles a multi-file script, stores nothing, and the answer starts and replays a run", async () => {
    const response = await compile({ entry: "main.ts", files: FILES });
    expect(response.statusCode).toBe(200);
    const script = response.json();
    expect(script).toMatchObject({ entry: "main.ts", hash: expect.stringMatching(/^sha256:/) });
    expect(JSON.parse(script.sourceMap).sources).toEqual(
      expect.arrayContaining(["main.ts", "lib/price.ts"]),
    );
    // Compiling stores nothing: the hash alone names no script yet.
    const byHash = await h.app.inject({
      method: "POST",
      url: "/v1/runs",
      headers: h.auth,
      payload: { script: { hash: script.hash }, input: { n: 2 } },
    });
    expect(byHash.statusCode).toBe(422);
    expect(byHash.json().error.message).toContain("is stored in this namespace");
    const started = await h.app.inject({
      method: "POST",
      url: "/v1/runs",
      headers: h.auth,
      payload: { script, input: { n: 2 } },
    });
    expect(started.statusCode).toBe(201);
    const runId = started.json().id as string;
    // The executor's part: the call the script makes, at its line of main.ts.
    await appendAsExecutor(
      h.store,
      runId,
      (seq) => [
        {
          seq,
          kind: "call",
          at: 1,
          name: "charge",
          args: { cents: 1200 },
          callId: `${runId}/${seq}`,
          callsite: "main.ts:4:16",
        },
      ],
      "waiting",
    );
    const fixed = await compile({
      entry: "main.ts",
      files: { ...FILES, "lib/price.ts": `export const price = (n: number): number => n * 700;\n` },
    });
    const check = await h.app.inject({
      method: "POST",
      url: `/v1/runs/${runId}/replay`,
      headers: h.auth,
      payload: { script: fixed.json() },
    });
    expect(check.statusCode).toBe(200);
    // The divergence carries the whole command the script emitted instead, not only its label.
    expect(check.json()).toMatchObject({
      matches: false,
      verdict: "incompatible",
      divergence: {
        seq: 2,
        recorded: { label: "call charge({ cents: 1200 })", callsite: "main.ts:4:16" },
        replayed: { callsite: expect.stringMatching(/^main\.ts:4:\d+$/) },
        replayedCommands: [{ kind: "call", name: "charge", args: { cents: 1400 } }],
      },
    });
  });

  it.each([
    [
      "node:fs",
      `import { readFileSync } from "node:fs";\nexport default async () => readFileSync("/etc/passwd", "utf8");\n`,
    ],
    [
      "a server path",
      `import secret from "../../../../etc/passwd";\nexport default async () => secret;\n`,
    ],
    ["an absolute path", `import x from "/work/package.json";\nexport default async () => x;\n`],
    ["a package", `import zod from "zod";\nexport default async () => zod;\n`],
  ])("refuses to import %s with a 422 naming file, line and column", async (_what, source) => {
    const response = await compile({ entry: "main.ts", files: { "main.ts": source } });
    expect(response.statusCode).toBe(422);
    const { error } = response.json();
    expect(error.code).toBe("COMPILE_ERROR");
    expect(error.problems).toEqual([
      { file: "main.ts", line: 1, column: expect.any(Number), message: expect.any(String) },
    ]);
    expect(error.message).toMatch(/main\.ts:1:\d+: .*(submitted files|above the script's root)/);
    expect(error.message).not.toMatch(/root:|"name": "rewind"/);
  });

  it("names each file, line and column that does not compile", async () => {
    const response = await compile({
      entry: "main.ts",
      files: { ...FILES, "lib/price.ts": "export const price = (n: number): number => n *;\n" },
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().error.problems).toEqual([
      { file: "lib/price.ts", line: 1, column: 48, message: expect.stringContaining("Unexpected") },
    ]);
  });

  it.each([
    [
      "a path above the root",
      { entry: "main.ts", files: { "../main.ts": "x" } },
      "body.files.../main.ts",
      "relative path",
    ],
    [
      "an absolute path",
      { entry: "main.ts", files: { "/etc/main.ts": "x" } },
      "body.files./etc/main.ts",
      "relative path",
    ],
    [
      "an entry not among the files",
      { entry: "main.ts", files: { "lib/price.ts": "x" } },
      "body.entry",
      "not among the files",
    ],
    [
      "a file that is not text",
      { entry: "main.ts", files: { "main.ts": 42 } },
      "body.files.main.ts",
      "",
    ],
    [
      "an entry that is no script",
      { entry: "main.sh", files: { "main.sh": "x" } },
      "body.entry",
      "ending in .ts or .js",
    ],
    ["no entry", { files: { "main.ts": "x" } }, "body.entry", "required"],
    [
      "a script over 1 MiB",
      { entry: "main.ts", files: { "main.ts": "x".repeat(MAX_SCRIPT_SOURCE_BYTES + 1) } },
      "body.files",
      "1 MiB",
    ],
    [
      "too many files",
      {
        entry: "f0.ts",
        files: Object.fromEntries(
          Array.from({ length: MAX_SCRIPT_FILES + 1 }, (_, i) => [`f${i}.ts`, "export {};"]),
        ),
      },
      "body.files",
      `the ${MAX_SCRIPT_FILES} a script may have`,
    ],
  ])("refuses %s at the door", async (_what, payload, field, words) => {
    const response = await compile(payload);
    expect(response.statusCode).toBe(422);
    const { error } = response.json();
    expect(error).toMatchObject({ code: "INVALID_INPUT", field });
    expect(error.message).toContain(words);
  });

  it("needs a token with the run scope", async () => {
    const none = await h.app.inject({
      method: "POST",
      url: "/v1/scripts/compile",
      payload: { entry: "main.ts", files: FILES },
    });
    expect(none.statusCode).toBe(401);
    const reader = await h.store.createToken("acme", "viewer", ["read"]);
    const refused = await compile({ entry: "main.ts", files: FILES }, bearer(reader));
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.message).toContain('lacks the scope "run"');
    // Another namespace compiles the same files to the same script: nothing is shared or stored.
    const other = await compile({ entry: "main.ts", files: FILES }, h.otherAuth);
    expect(other.statusCode).toBe(200);
    expect(other.json().hash).toBe((await compile({ entry: "main.ts", files: FILES })).json().hash);
  });
});

describe("GET /v1/token", () => {
  it("answers the request's own token: namespace, label and scopes", async () => {
    const reader = await h.store.createToken("acme", "viewer", ["read"]);
    const self = await h.app.inject({ method: "GET", url: "/v1/token", headers: bearer(reader) });
    expect(self.statusCode).toBe(200);
    expect(self.json()).toMatchObject({ namespace: "acme", label: "viewer", scopes: ["read"] });
    const full = await h.app.inject({ method: "GET", url: "/v1/token", headers: h.otherAuth });
    expect(full.json()).toMatchObject({
      namespace: "other",
      scopes: expect.arrayContaining(["run"]),
    });
    const none = await h.app.inject({ method: "GET", url: "/v1/token" });
    expect(none.statusCode).toBe(401);
  });
});
