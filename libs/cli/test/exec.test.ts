import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const cli = path.join(root, "libs/cli/dist/main.js");
const examples = path.join(root, "examples");
let dir: string;

beforeAll(() => {
  if (!existsSync(cli))
    throw new Error(`${cli} is missing: run \`npm run build\` first (npm test does)`);
  dir = mkdtempSync(path.join(tmpdir(), "rewind-exec-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function rewind(...args: string[]) {
  const result = spawnSync(process.execPath, [cli, ...args], {
    cwd: root,
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const SEED = "0f".repeat(32);
const order = [
  "exec",
  `${examples}/order.ts`,
  "--tools",
  `${examples}/tools.ts`,
  "--input",
  '{"orderId":"A7"}',
  "--seed",
  SEED,
];

describe("rewind exec", () => {
  it("runs the order example to completion in virtual time, printing output and result", () => {
    const out = path.join(dir, "order.jsonl");
    const { code, stdout, stderr } = rewind(
      ...order,
      "--signal",
      'approval={"approved":true}@2h',
      "--journal",
      out,
    );
    expect(stderr).toContain("✓ completed");
    expect(code).toBe(0);
    expect(stdout).toBe('shipping ch_A7\n{"at":"2025-01-11T02:00:00.000Z","status":"shipped"}\n');
    const lines = readFileSync(out, "utf8").trim().split("\n");
    expect(JSON.parse(lines[0]!)).toMatchObject({
      kind: "run.started",
      seed: SEED,
      input: { orderId: "A7" },
    });
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ kind: "run.completed" });
  });

  it("writes the same journal twice and resumes a truncated one to the same end", () => {
    const a = path.join(dir, "a.jsonl");
    const b = path.join(dir, "b.jsonl");
    const agent = [
      "exec",
      `${examples}/agent.ts`,
      "--tools",
      `${examples}/tools.ts`,
      "--input",
      '{"goal":"g"}',
      "--seed",
      SEED,
    ];
    expect(rewind(...agent, "--journal", a).code).toBe(0);
    expect(rewind(...agent, "--journal", b).code).toBe(0);
    expect(readFileSync(b, "utf8")).toBe(readFileSync(a, "utf8"));

    const prefix = path.join(dir, "prefix.jsonl");
    writeFileSync(prefix, readFileSync(a, "utf8").split("\n").slice(0, 7).join("\n"));
    const resumed = path.join(dir, "resumed.jsonl");
    const run = rewind(
      "exec",
      `${examples}/agent.ts`,
      "--tools",
      `${examples}/tools.ts`,
      "--resume",
      prefix,
      "--journal",
      resumed,
    );
    expect(run.code).toBe(0);
    expect(readFileSync(resumed, "utf8")).toBe(readFileSync(a, "utf8"));
    expect(run.stdout).not.toContain("step 1:"); // output already journaled is not shown again
    expect(run.stdout).toContain("step 4:");
  });

  it("completes the order as rejected when no approval comes within three days", () => {
    const { code, stdout } = rewind(...order);
    expect(code).toBe(0);
    expect(stdout).toBe('{"status":"rejected"}\n');
  });

  it("exits 2 for a run left waiting, with a hint to send the signal", () => {
    const script = path.join(dir, "waits.ts");
    writeFileSync(
      script,
      `import { waitForSignal } from "rewind";\nexport default async () => waitForSignal("approval");\n`,
    );
    const { code, stderr } = rewind("exec", script);
    expect(code).toBe(2);
    expect(stderr).toContain("--signal");
  });

  it("exits 1 for a failed run and 3 for a divergence, with the report on stderr", () => {
    const script = path.join(dir, "fails.ts");
    writeFileSync(
      script,
      `export default async function main(): Promise<never> {\n  throw new Error("no stock");\n}\n`,
    );
    const failed = rewind("exec", script);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("Error: no stock");
    expect(failed.stderr).toContain("fails.ts:2:9");

    const journal = path.join(dir, "hello.jsonl");
    expect(
      rewind(
        "exec",
        `${examples}/hello.ts`,
        "--tools",
        `${examples}/tools.ts`,
        "--journal",
        journal,
      ).code,
    ).toBe(0);
    const changed = path.join(dir, "hello-changed.ts");
    writeFileSync(
      changed,
      readFileSync(`${examples}/hello.ts`, "utf8").replace('"world"', '"moon"'),
    );
    const diverged = rewind(
      "exec",
      changed,
      "--tools",
      `${examples}/tools.ts`,
      "--resume",
      journal,
    );
    expect(diverged.code).toBe(3);
    expect(diverged.stderr).toMatch(/diverges from its journal at seq 2/);
    expect(diverged.stderr).toContain('call lookup({ q: "world" })   at hello.ts:4:');
    expect(diverged.stderr).toContain('call lookup({ q: "moon" })   at hello-changed.ts:4:');
  });

  it("survives a script whose allocation aborts the sandbox's process, journaling MEMORY_LIMIT", () => {
    const bomb = path.join(dir, "bomb.ts");
    writeFileSync(
      bomb,
      `import { tools } from "rewind";
export default async function main() {
  await tools.lookup({ q: "before" });
  return new Array(1e9).fill(0).length;
}
`,
    );
    const out = path.join(dir, "bomb.jsonl");
    const { code, stderr } = rewind(
      "exec",
      bomb,
      "--tools",
      `${examples}/tools.ts`,
      "--journal",
      out,
    );
    expect(code).toBe(1);
    expect(stderr).toContain("MEMORY_LIMIT");
    const last = JSON.parse(readFileSync(out, "utf8").trim().split("\n").at(-1)!) as {
      kind: string;
      error: { code: string };
    };
    expect(last).toMatchObject({ kind: "run.failed", error: { code: "MEMORY_LIMIT" } });
  });

  it("says what to fix for bad input", () => {
    expect(rewind(...order.slice(0, 4), "--input", "{oops").stderr).toMatch(
      /--input is not valid JSON/,
    );
    expect(rewind(...order.slice(0, 6), "--seed", "xyz").stderr).toMatch(
      /--seed must be 64 hex digits/,
    );
    const bad = path.join(dir, "bad.jsonl");
    writeFileSync(bad, '{"seq":1,"kind":"run.started"}\n');
    expect(rewind("exec", `${examples}/hello.ts`, "--resume", bad).stderr).toMatch(
      /line 1 \(run.started\) has no numeric "at"/,
    );
    const broken = path.join(dir, "broken.ts");
    writeFileSync(broken, `import fs from "node:fs";\nexport default async () => fs;\n`);
    const compile = rewind("exec", broken);
    expect(compile.code).toBe(1);
    expect(compile.stderr).toMatch(/does not compile/);
  });
});

describe("rewind exec --fork", () => {
  it("forks a journal file: calls that match are reused, the rest run live", () => {
    const parent = path.join(dir, "parent.jsonl");
    expect(
      rewind(
        "exec",
        `${examples}/hello.ts`,
        "--tools",
        `${examples}/tools.ts`,
        "--input",
        '{"name":"ada"}',
        "--journal",
        parent,
      ).code,
    ).toBe(0);
    const fixed = path.join(dir, "hello-fixed.ts");
    writeFileSync(
      fixed,
      readFileSync(`${examples}/hello.ts`, "utf8").replace(
        "`hello, ${found.q}`",
        "`hi, ${found.q}`",
      ),
    );
    const out = path.join(dir, "fork.jsonl");
    const fork = rewind(
      "exec",
      fixed,
      "--tools",
      `${examples}/tools.ts`,
      "--fork",
      parent,
      "--journal",
      out,
    );
    expect(fork.code).toBe(0);
    expect(fork.stderr).toMatch(/forked run_mock_\w+: 2 entries reused, the rest live/);
    expect(fork.stdout).toContain("hi, ada");
    const lines = readFileSync(out, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { kind: string; callId?: string });
    const parentLines = readFileSync(parent, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { kind: string; callId?: string });
    expect(lines[1]!.callId).toBe(parentLines[1]!.callId); // the reused lookup keeps its callId
  });
});

it("ends quietly when the reader closes the pipe early (rewind … | head)", async () => {
  const script = path.join(dir, "chatty.ts");
  writeFileSync(
    script,
    `export default async () => { for (let i = 0; i < 20000; i++) console.log("line", i, "x".repeat(80)); };`,
  );
  const child = spawn(process.execPath, [cli, "exec", script], { cwd: root });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  // Like `head -1`: the first chunk read, then the pipe closed.
  child.stdout.once("data", () => child.stdout.destroy());
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  expect(stderr).not.toMatch(/EPIPE|Error/);
  expect(code).toBe(0);
}, 60_000);
