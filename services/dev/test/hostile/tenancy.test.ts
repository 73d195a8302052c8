/**
 * One tenant against another: scripts (and their source maps) belong to their namespace, so an
 * upload of the same code can never change what another tenant's run executes or shows, and a
 * known hash grants nothing. Values are reached only through runs of the caller's namespace.
 */
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { compileScript, type CompiledScript } from "@rewind/sandbox";
import { Rewind } from "@rewind/sdk";
import { openHostilePlatform, type HostilePlatform } from "./harness.js";

let h: HostilePlatform;
let mallory: { authorization: string };
let mine: CompiledScript;
beforeAll(async () => {
  h = await openHostilePlatform();
  mallory = { authorization: `Bearer ${await h.platform.store.createToken("mallory", "test")}` };
  mine = await compileScript({
    source: `export default async function main(input: { secret: string }) {
  console.log("working on", input.secret);
  return input.secret.length;
}`,
    filename: "victim.ts",
  });
});
afterAll(async () => h.close());
afterEach(async () => h.check());

async function as(auth: { authorization: string }, method: string, path: string, body?: unknown) {
  const response = await fetch(`${h.url}${path}`, {
    method,
    headers: { ...auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as any };
}

it("another tenant's upload of the same code, first, with its own map, changes nothing of mine", async () => {
  const forged = {
    ...mine,
    entry: "evil.ts",
    sourceMap: JSON.stringify({ version: 3, sources: ["evil.ts"], mappings: "" }),
  };
  const theirs = await as(mallory, "POST", "/v1/runs", { script: forged, input: { secret: "x" } });
  expect(theirs.status).toBe(201);
  expect(theirs.body.scriptHash).toBe(mine.hash); // the same code, the same hash

  const { id } = await h.api.runs.start({ script: mine, input: { secret: "s3cret" } });
  h.runs.add(id);
  expect(await h.api.runs.result(id, "20s")).toMatchObject({ status: "completed", result: 6 });
  const journal = await as(h.auth, "GET", `/v1/runs/${id}/journal`);
  const output = journal.body.entries.find((e: { kind: string }) => e.kind === "output");
  expect(output.callsite).toMatch(/^victim\.ts:2:/);
  const script = await as(h.auth, "GET", `/v1/runs/${id}/script`);
  expect(script.body).toMatchObject({ entry: "victim.ts", sourceMap: mine.sourceMap });
});

it("knowing my script's hash lets another tenant neither start a run from it nor read it", async () => {
  const secret = await compileScript({
    source: `export default async function main() { return "only mine: ${"k".repeat(8)}"; }`,
    filename: "private.ts",
  });
  const { id } = await h.api.runs.start({ script: secret });
  h.runs.add(id);
  expect(await h.api.runs.result(id, "20s")).toMatchObject({ status: "completed" });

  const started = await as(mallory, "POST", "/v1/runs", { script: { hash: secret.hash } });
  expect(started.status).toBe(422);
  expect(started.body.error).toMatchObject({ code: "INVALID_INPUT", field: "body.script.hash" });
  expect(started.body.error.message).toContain("is stored in this namespace");
  for (const path of [`/v1/runs/${id}/script`, `/v1/runs/${id}/journal`, `/v1/runs/${id}`]) {
    const read = await as(mallory, "GET", path);
    expect(read.status, path).toBe(404);
    expect(JSON.stringify(read.body)).not.toContain("only mine");
  }
  const replayed = await as(mallory, "POST", "/v1/replay", { runs: [id] });
  expect(JSON.stringify(replayed.body)).not.toContain("only mine");
  expect(replayed.body.checks?.[0]?.error?.code ?? replayed.body.error?.code).toBe("NOT_FOUND");
});

it("a tenant's values are read only through its own runs", async () => {
  // The same input in two namespaces is one value by hash; each reads it through its own run
  // only, and the other's run stays invisible.
  const other = new Rewind({ url: h.url, token: mallory.authorization.slice(7) });
  const a = await h.api.runs.start({ script: h.honest, input: { n: 21 } });
  const b = await other.runs.start({ script: h.honest, input: { n: 21 } });
  h.runs.add(a.id);
  expect(await other.runs.result(b.id, "20s")).toMatchObject({ status: "completed", result: 42 });
  expect((await as(mallory, "GET", `/v1/runs/${a.id}/journal`)).status).toBe(404);
  expect((await as(h.auth, "GET", `/v1/runs/${b.id}/journal`)).status).toBe(404);
});
