/**
 * U+0000 from inside a script (issue 17's NUL bytes, past the door): Postgres holds none in text
 * or jsonb (nor a lone surrogate in jsonb), so a run printing one, calling a tool named with one or throwing an error holding one
 * failed its commit on every attempt and was retried once a second, forever, "running". Each now
 * ends as the script says, with its NUL kept; a source map naming a file with one is refused at
 * the door, naming the field.
 */
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { compileScript, type CompiledScript } from "@rewind/sandbox";
import { defineToolset } from "@rewind/sdk";
import { openHostilePlatform, type HostilePlatform } from "./harness.js";

const shop = defineToolset("shop", { echo: (args: unknown) => args });

let h: HostilePlatform;
let script: CompiledScript;
beforeAll(async () => {
  h = await openHostilePlatform({ toolsets: [shop] });
  script = await compileScript({
    source: `import { tools } from "rewind";
export default async function main(input: { what: string }) {
  if (input.what === "output") console.log("a\\u0000b");
  if (input.what === "tool") await (tools as any)["ec\\u0000ho"]({});
  if (input.what === "echo") return tools.echo({ "k\\u0000": "v\\u0000" });
  if (input.what === "throw") throw new Error("bad\\u0000thing");
  if (input.what === "surrogate") {
    console.log("lone \\ud800");
    throw new Error("lone \\udc00");
  }
  return input.what;
}`,
    filename: "nul.ts",
  });
}, 180_000);
afterAll(async () => h?.close());
afterEach(async () => h.check());

async function run(what: string) {
  const { id } = await h.api.runs.start({ script, input: { what }, toolset: "shop" });
  h.runs.add(id);
  return { id, result: await h.api.runs.result(id, "20s") };
}

it("a line of output holding U+0000 is journaled as printed, and the run completes", async () => {
  const { id, result } = await run("output");
  expect(result).toMatchObject({ status: "completed", result: "output" });
  const { entries } = await h.api.runs.journal(id);
  expect(entries.find((e) => e.kind === "output")).toMatchObject({ text: "a\u0000b\n" });
});

it("a tool named with U+0000 fails the run with TOOL_NOT_FOUND, naming it", async () => {
  const { id, result } = await run("tool");
  expect(result).toMatchObject({ status: "failed", error: { code: "TOOL_NOT_FOUND" } });
  expect(result.error?.message).toContain('no tool "ec\u0000ho"');
  const { entries } = await h.api.runs.journal(id);
  expect(entries.find((e) => e.kind === "call")).toMatchObject({ name: "ec\u0000ho" });
});

it("a tool's arguments and result holding U+0000 come back whole", async () => {
  const { result } = await run("echo");
  expect(result).toMatchObject({ status: "completed", result: { "k\u0000": "v\u0000" } });
});

it("an error holding U+0000 fails the run with SCRIPT_ERROR and that message", async () => {
  const { id, result } = await run("throw");
  expect(result).toMatchObject({ status: "failed", error: { code: "SCRIPT_ERROR" } });
  expect(result.error?.message).toBe("bad\u0000thing");
  expect((await h.api.runs.get(id)).error?.message).toBe("bad\u0000thing");
});

it("a lone surrogate in output and in an error is kept too, and the run fails as thrown", async () => {
  const { id, result } = await run("surrogate");
  expect(result).toMatchObject({ status: "failed", error: { code: "SCRIPT_ERROR" } });
  expect(result.error?.message).toBe("lone \udc00");
  const { entries } = await h.api.runs.journal(id);
  expect(entries.find((e) => e.kind === "output")).toMatchObject({ text: "lone \ud800\n" });
});

it("a source map naming a file with U+0000 is refused at submission, naming the field", async () => {
  const map = JSON.parse(script.sourceMap) as { sources: string[] };
  map.sources = ["nul\u0000.ts"];
  const response = await fetch(`${h.url}/v1/runs`, {
    method: "POST",
    headers: { ...h.auth, "content-type": "application/json" },
    body: JSON.stringify({ script: { ...script, sourceMap: JSON.stringify(map) } }),
  });
  expect(response.status).toBe(422);
  const body = (await response.json()) as { error: { field: string; message: string } };
  expect(body.error.field).toBe("body.script.sourceMap");
  expect(body.error.message).toContain("NUL");
});
