import { RewindError } from "@rewind/core";
import { describe, expect, it } from "vitest";
import { compileScript } from "./compiler.js";

const MAIN = `import { tools } from "rewind";
import { price } from "./lib/price";
import { tax } from "./lib/tax.js";
export default async function main() {
  return tools.charge({ cents: tax(price(2)) });
}
`;
const FILES = {
  "main.ts": MAIN,
  "lib/price.ts": `export const price = (n: number): number => n * 600;\n`,
  "lib/tax.ts": `import { price } from "../lib/price";\nexport const tax = (n: number): number => n + price(0);\n`,
};

async function problemsOf(files: Record<string, string>, entry = "main.ts") {
  try {
    await compileScript({ entry, files });
  } catch (error) {
    expect(error).toBeInstanceOf(RewindError);
    const rewind = error as RewindError;
    expect(rewind.code).toBe("COMPILE_ERROR");
    return { message: rewind.message, problems: rewind.details.problems as unknown[] };
  }
  throw new Error("compiled, but should not have");
}

describe("compiling submitted files", () => {
  it("bundles a multi-file script from memory, its sources named as submitted", async () => {
    const compiled = await compileScript({ entry: "main.ts", files: FILES });
    expect(compiled.entry).toBe("main.ts");
    expect(compiled.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    const map = JSON.parse(compiled.sourceMap) as { sources: string[]; sourcesContent: string[] };
    expect(map.sources).toEqual(expect.arrayContaining(["main.ts", "lib/price.ts", "lib/tax.ts"]));
    expect(map.sourcesContent[map.sources.indexOf("main.ts")]).toBe(MAIN);
    // The same files compile to the same script: a pasted fix is stored once.
    expect((await compileScript({ entry: "main.ts", files: { ...FILES } })).hash).toBe(
      compiled.hash,
    );
  });

  it.each([
    ["node:fs", `import fs from "node:fs";\nexport default async () => fs;\n`],
    ["fs", `import { readFileSync } from "fs";\nexport default async () => readFileSync;\n`],
    ["a package", `import x from "lodash";\nexport default async () => x;\n`],
    ["an absolute path", `import x from "/etc/passwd";\nexport default async () => x;\n`],
    ["a path above the root", `import x from "../../etc/passwd";\nexport default async () => x;\n`],
    ["a dynamic import", `export default async () => import("/etc/hostname");\n`],
    ["a require", `export default async () => require("../../../etc/passwd");\n`],
  ])("refuses to import %s, naming the line", async (_what, source) => {
    const { message, problems } = await problemsOf({ "main.ts": source });
    expect(problems[0]).toMatchObject({ file: "main.ts", line: expect.any(Number) });
    expect(message).not.toContain("root:x:0");
    expect(message).toMatch(/submitted files|not one of|above the script's root/);
  });

  it("names the file, line and column of each syntax error", async () => {
    const { problems } = await problemsOf({
      "main.ts": `import { f } from "./lib/f";\nexport default async () => f();\n`,
      "lib/f.ts": `export function f() {\n  let x: = 1;\n}\n`,
    });
    expect(problems).toEqual([
      { file: "lib/f.ts", line: 2, column: 10, message: expect.stringContaining("Unexpected") },
    ]);
  });

  it("says which files it has when an import names none of them", async () => {
    const { message } = await problemsOf({
      "main.ts": `import { f } from "./lib/missing";\nexport default async () => f();\n`,
    });
    expect(message).toContain(
      '"./lib/missing" (from main.ts) is not among the submitted files (main.ts)',
    );
  });
});
