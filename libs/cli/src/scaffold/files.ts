/**
 * The files `rewind init` writes: a script, its toolset, the declaration that types the script's
 * `"rewind"` module by that toolset, a test against mock tools in virtual time, and two tsconfigs
 * (the scripts see no Node types, as the sandbox has no Node).
 */
const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

export const SCRIPT = "scripts/hello.ts";
export const TOOLSET = "tools.ts";

export const scaffoldFiles: Readonly<Record<string, string>> = {
  [TOOLSET]: `import { defineToolset } from "@rewind/sdk";

/**
 * The tools your scripts call (\`tools.greet({ name })\`). A tool runs in the worker, outside the
 * sandbox: call real services here, passing \`ctx.callId\` as their idempotency key. Runs name
 * this toolset by its name ("default" is the one \`rewind run\` uses when given none).
 */
export default defineToolset("default", {
  greet: async (args: { name: string }, ctx) => ({
    message: \`hello, \${args.name}\`,
    callId: ctx.callId,
  }),
});
`,
  "rewind.d.ts": `// The "rewind" module your scripts import, typed by your toolset: scripts/tsconfig.json maps
// "rewind" here, so it resolves to these types even where the unrelated npm package "rewind" is
// installed. A wrong tool name or argument, or a misused result, is then a type error.
import type toolset from "./tools.js";
import type { ScriptTools } from "@rewind/sdk/script";
export { sleep, waitForSignal } from "@rewind/sdk/script";
export declare const tools: ScriptTools<typeof toolset>;
`,
  [SCRIPT]: `import { sleep, tools } from "rewind";

/**
 * A durable script: every tool call, timer and line of output is journaled, so the run survives
 * a crash or a restart of \`rewind dev\` and carries on where it was.
 */
export default async function main(input: { name: string }) {
  const greeting = await tools.greet({ name: input.name });
  console.log(greeting.message);
  await sleep("2s"); // real time under rewind dev; virtual (instant) in the test
  return { greeted: input.name, message: greeting.message };
}
`,
  "scripts/tsconfig.json": json({
    // Scripts run in Rewind's sandbox: the language, the script API, no Node (process, Buffer
    // and require are type errors here, as they are errors there).
    compilerOptions: {
      target: "ES2022",
      lib: ["ES2023"],
      module: "ESNext",
      moduleResolution: "Bundler",
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: [],
      paths: { rewind: ["../rewind.d.ts"] },
    },
    include: ["**/*.ts"],
  }),
  "tsconfig.json": json({
    // The toolset and the tests, which run on Node. The scripts have their own (scripts/).
    compilerOptions: {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      allowJs: true,
      checkJs: true,
      types: ["node"],
    },
    include: [TOOLSET, "test"],
  }),
  "test/hello.test.js": `// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { runWithMocks } from "@rewind/testing";

const script = fileURLToPath(new URL("../${SCRIPT}", import.meta.url));

test("hello greets with the tool's message, in virtual time", async () => {
  const began = Date.now();
  const run = await runWithMocks({
    script,
    input: { name: "Ada" },
    tools: { greet: async (/** @type {{ name: string }} */ args) => ({ message: \`hi \${args.name}\` }) },
  });
  assert.equal(run.status, "completed");
  assert.deepEqual(run.result, { greeted: "Ada", message: "hi Ada" });
  assert.deepEqual(run.output, ["hi Ada\\n"]);
  assert.ok(Date.now() - began < 2_000, "the script's sleep passes in virtual time");
});
`,
  ".gitignore": "node_modules/\n.rewind/\n",
};

/** The npm scripts `rewind init` adds to package.json (never replacing one already there). */
export const npmScripts: Readonly<Record<string, string>> = {
  dev: `rewind dev --toolset ${TOOLSET}`,
  hello: `rewind run ${SCRIPT} --input "{\\"name\\":\\"Ada\\"}" --wait`,
  exec: `rewind exec ${SCRIPT} --tools ${TOOLSET} --input "{\\"name\\":\\"Ada\\"}"`,
  test: "node --test",
  typecheck: "tsc -p . && tsc -p scripts",
};
