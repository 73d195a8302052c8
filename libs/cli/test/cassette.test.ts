import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { compileScript } from "@rewind/sandbox";
import tools from "../../../examples/tools.js";
import { usePlatform } from "./platform-harness.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const examples = path.join(root, "examples");
const h = usePlatform([tools]);

describe("rewind cassette and rewind test", () => {
  it("exports a real run as a cassette, and tests the script (and a changed one) against it", async () => {
    const api = h.api;
    const agent = await compileScript({ file: path.join(examples, "agent.ts") });
    const { id } = await api.runs.start({ script: agent, input: { goal: "g" }, toolset: "shop" });
    const real = await api.runs.result(id, "20s");

    const file = path.join(h.dir, "agent.cassette.jsonl");
    expect((await h.rewind("cassette", id, "-o", file)).code).toBe(0);
    expect(JSON.parse(readFileSync(file, "utf8").split("\n")[0]!)).toMatchObject({
      kind: "run.started",
      scriptHash: agent.hash,
    });

    const passing = await h.rewind("test", path.join(examples, "agent.ts"), "--cassette", file);
    expect(passing.stderr).toContain("passes against");
    expect(passing.code).toBe(0);
    expect(passing.stdout.trim().split("\n").at(-1)).toBe(JSON.stringify(real.result));

    const changed = path.join(h.dir, "agent-changed.ts");
    writeFileSync(
      changed,
      readFileSync(path.join(examples, "agent.ts"), "utf8").replace(
        "{ step, notes }",
        "{ step: step + 1, notes }",
      ),
    );
    const failing = await h.rewind("test", changed, "--cassette", file);
    expect(failing.code).toBe(1);
    expect(failing.stderr).toMatch(
      /tools\.think\(.*step: 2.*\) is not in the cassette; the nearest recorded call is tools\.think\(/,
    );
  });
});
