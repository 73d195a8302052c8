/**
 * Tools that replay on the CLI's own Node say which epoch a journal is when this Node is not its
 * runtime, and what to run instead, rather than report a divergence that is the runtime's.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { epochSupport } from "@rewind/sandbox";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const cli = path.join(root, "libs/cli/dist/main.js");
const examples = path.join(root, "examples");
let dir: string;
/** An epoch of another runtime than this one: Node 24's on Node 20, Node 20's elsewhere. */
const foreign = epochSupport().epochs.includes(1) ? 3 : 1;
const foreignNode = foreign === 3 ? "Node 24" : "Node 20";

function rewind(...args: string[]) {
  const result = spawnSync(process.execPath, [cli, ...args], {
    cwd: root,
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const exec = [
  "exec",
  `${examples}/order.ts`,
  "--tools",
  `${examples}/tools.ts`,
  "--input",
  '{"orderId":"A7"}',
  "--seed",
  "0f".repeat(32),
];
let own: string;
let other: string;

beforeAll(() => {
  if (!existsSync(cli))
    throw new Error(`${cli} is missing: run \`npm run build\` first (npm test does)`);
  dir = mkdtempSync(path.join(tmpdir(), "rewind-epoch-runtime-"));
  own = path.join(dir, "own.jsonl");
  expect(rewind(...exec, "--journal", own).code).toBe(0);
  // The same journal, as if recorded in the other runtime's epoch.
  const lines = readFileSync(own, "utf8").split("\n");
  const started = JSON.parse(lines[0]!) as { kind: string; epoch: number };
  expect(started.kind).toBe("run.started");
  lines[0] = JSON.stringify({ ...started, epoch: foreign });
  other = path.join(dir, "other.jsonl");
  writeFileSync(other, lines.join("\n"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a journal of another runtime's epoch", () => {
  it("replays on this Node when it is this Node's epoch (control)", () => {
    const { code, stdout } = rewind("replay", own, "--script", `${examples}/order.ts`);
    expect(stdout).toMatch(/journal entries match/);
    expect(code).toBe(0);
  });

  it.each([
    ["rewind replay", () => ["replay", other, "--script", `${examples}/order.ts`]],
    ["rewind exec --resume", () => [...exec, "--resume", other]],
    ["rewind test --cassette", () => ["test", `${examples}/order.ts`, "--cassette", other]],
  ])("%s says which epoch it is and what to run instead", (tool, args) => {
    const { code, stderr } = rewind(...args());
    expect(code).not.toBe(0);
    expect(stderr).toContain(`This journal is epoch ${foreign}, replayed by ${foreignNode}`);
    expect(stderr).toContain(`run \`${tool}\` with ${foreignNode}`);
    expect(stderr).not.toMatch(/diverge[sd]? at/);
  });
});
