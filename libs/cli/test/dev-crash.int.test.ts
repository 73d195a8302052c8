/**
 * The acceptance test of durable runs on the embedded default: `rewind dev` (PGlite under a temp
 * folder) is killed with SIGKILL at random moments while 200 runs of the examples execute, and
 * started again each time. Afterwards every run has completed with the journal a clean run
 * would produce, and the counting server outside the platform saw each callId with one body.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { JournalEntry } from "@rewind/core";
import { runInProcess } from "@rewind/executor";
import { Sandbox, compileScript } from "@rewind/sandbox";
import { Rewind } from "@rewind/sdk";
import tools from "./fixtures/counting-tools.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const cli = path.join(root, "libs/cli/dist/main.js");
const fixtures = fileURLToPath(new URL("fixtures/", import.meta.url));
const RUNS = 200;
const SCRIPTS = [
  path.join(root, "examples/hello.ts"),
  path.join(root, "examples/agent.ts"),
  path.join(fixtures, "steps.ts"),
];

let dir: string;
let counter: Server;
let counterUrl: string;
const seen = new Map<string, Set<string>>();
let dev: ChildProcess | undefined;
let port = 0;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "rewind-crash-"));
  symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"));
  counter = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      const call = JSON.parse(body) as { callId: string; body: string };
      const bodies = seen.get(call.callId) ?? new Set<string>();
      bodies.add(call.body);
      seen.set(call.callId, bodies);
      response.end("ok");
    });
  });
  await new Promise<void>((resolve) => counter.listen(0, "127.0.0.1", resolve));
  counterUrl = `http://127.0.0.1:${(counter.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  dev?.kill("SIGKILL");
  await new Promise((resolve) => counter.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

async function startDev(): Promise<Rewind> {
  dev = spawn(
    process.execPath,
    [cli, "dev", "--port", String(port), "--toolset", path.join(fixtures, "counting-tools.ts")],
    {
      cwd: dir,
      env: { ...process.env, COUNTER_URL: counterUrl, DATABASE_URL: "" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  dev.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  dev.stderr!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const match = /API\s+http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
    if (match) {
      port = Number(match[1]);
      break;
    }
    if (Date.now() > deadline || dev.exitCode !== null)
      throw new Error(`rewind dev did not start:\n${out}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const token = /token\s+(\S+)/.exec(out)![1]!;
  // The dashboard's address carries the token in its fragment (never sent to a server).
  expect(out).toContain(
    `dashboard http://localhost:${port}/dashboard/#token=${encodeURIComponent(token)}`,
  );
  return new Rewind({ url: `http://127.0.0.1:${port}`, token });
}

function kill(): Promise<void> {
  return new Promise((resolve) => {
    dev!.once("exit", () => resolve());
    dev!.kill("SIGKILL");
  });
}

/** What a journal says, without wall-clock times or ids. */
const shape = (journal: readonly JournalEntry[]) =>
  journal.map((e) => {
    const {
      at: _at,
      due: _due,
      callId: _callId,
      runId: _runId,
      ...rest
    } = e as JournalEntry & Record<string, unknown>;
    return rest;
  });

it("loses no run and repeats no completed call when rewind dev is killed at random moments", async () => {
  let api = await startDev();
  const ids: { id: string; script: string; input: unknown }[] = [];
  const compiled = await Promise.all(SCRIPTS.map((file) => compileScript({ file })));
  for (let i = 0; i < RUNS; i++) {
    const script = compiled[i % compiled.length]!;
    const input =
      script.entry === "steps.ts"
        ? { id: i }
        : script.entry === "agent.ts"
          ? { goal: `goal ${i}` }
          : { name: `n${i}` };
    const { id } = await api.runs.start({ script, input, toolset: "shop" });
    ids.push({ id, script: script.entry, input });
  }

  // Kill and restart at random moments until every run has ended (bounded).
  let kills = 0;
  const openAtKills: number[] = [];
  const deadline = Date.now() + 150_000;
  for (;;) {
    const { runs } = await api.runs.list({ limit: 500 });
    const open = runs.filter((r) => !["completed", "failed", "cancelled"].includes(r.status));
    if (open.length === 0 && runs.length === RUNS) break;
    if (Date.now() > deadline)
      throw new Error(`${open.length} runs still open after ${kills} kills`);
    if (kills < 8) {
      await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 600));
      const before = (await api.runs.list({ limit: 500 })).runs.filter(
        (r) => !["completed", "failed", "cancelled"].includes(r.status),
      );
      await kill();
      openAtKills.push(before.length);
      kills++;
      api = await startDev();
    } else {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  console.log(
    `rewind dev killed ${kills} times; runs open at each kill: ${openAtKills.join(", ")}`,
  );
  // Most kills landed while runs were in flight.
  expect(
    openAtKills.filter((n) => n > 0).length,
    `open runs at each kill: ${openAtKills.join(", ")}`,
  ).toBeGreaterThanOrEqual(4);

  // Every run completed, with the journal a clean run (mock mode, same seed) produces.
  const sandbox = new Sandbox();
  try {
    for (const { id, script, input } of ids) {
      const run = await api.runs.get(id);
      expect(run.status, `${id} (${script}): ${JSON.stringify(run.error)}`).toBe("completed");
      const { entries } = await api.runs.journal(id);
      const started = entries[0] as Extract<JournalEntry, { kind: "run.started" }>;
      const clean = await runInProcess({
        script: compiled.find((c) => c.entry === script)!,
        sandbox,
        toolset: tools,
        input: input as null,
        seed: started.seed,
        startAt: started.at,
        runId: started.runId,
      });
      const live = shape(entries).filter(
        (e) => e.kind !== "timer.set" && e.kind !== "timer.fired" && e.kind !== "timer.cancel",
      );
      const expected = shape(clean.journal).filter(
        (e) => e.kind !== "timer.set" && e.kind !== "timer.fired" && e.kind !== "timer.cancel",
      );
      expect(
        live.map((e) => ({ ...e, seq: 0 })),
        `${id} (${script})`,
      ).toEqual(expected.map((e) => ({ ...e, seq: 0 })));
      expect(run.result).toEqual(clean.result);
    }
  } finally {
    sandbox.dispose();
  }
  // The outside world saw each callId with one body only.
  for (const [callId, bodies] of seen) expect(bodies.size, callId).toBe(1);
  expect(seen.size).toBeGreaterThan(RUNS);
}, 200_000);
