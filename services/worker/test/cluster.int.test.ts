/**
 * The cluster in miniature: `rewind api` and two `rewind worker` processes on a Postgres database
 * and a Redis key prefix of their own. One worker is killed with SIGKILL in the middle of the
 * load: every run completes (the other worker takes over once the lease expires), and the
 * counting server outside saw each callId with one body.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { compileScript } from "@rewind/sandbox";
import { Rewind } from "@rewind/sdk";
import { migrate, openSqlClient, openStore } from "@rewind/store";
import { createTestDatabase } from "@rewind/store/testing";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const cli = path.join(root, "libs/cli/dist/main.js");
const toolsFile = path.join(root, "libs/cli/test/fixtures/counting-tools.ts");
const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const prefix = `rewind-cluster-${randomBytes(4).toString("hex")}`;
const children: ChildProcess[] = [];
const seen = new Map<string, Set<string>>();
let counter: Server;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let env: NodeJS.ProcessEnv;
let api: Rewind;

function start(args: string[]): ChildProcess {
  const child = spawn(process.execPath, [cli, ...args], {
    cwd: root,
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  child.stderr!.on("data", () => {});
  children.push(child);
  return child;
}

beforeAll(async () => {
  counter = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      const call = JSON.parse(body) as { callId: string; body: string };
      seen.set(call.callId, (seen.get(call.callId) ?? new Set()).add(call.body));
      response.end("ok");
    });
  });
  await new Promise<void>((resolve) => counter.listen(0, "127.0.0.1", resolve));
  database = await createTestDatabase("rewind_cluster");
  const sql = await openSqlClient({ databaseUrl: database.url });
  await migrate(sql);
  await sql.close();
  const store = await openStore({ databaseUrl: database.url });
  const token = await store.createToken("default", "cluster test");
  await store.close();
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  env = {
    ...process.env,
    DATABASE_URL: database.url,
    REDIS_URL,
    REWIND_REDIS_PREFIX: prefix,
    COUNTER_URL: `http://127.0.0.1:${(counter.address() as AddressInfo).port}/`,
  };
  start(["api", "--port", String(port)]);
  api = new Rewind({ url: `http://127.0.0.1:${port}`, token });
  const deadline = Date.now() + 20_000;
  while (
    !(await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (Date.now() > deadline) throw new Error("rewind api did not start");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}, 60_000);

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await new Promise((resolve) => counter.close(resolve));
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
  await database.drop();
});

it("completes every run when a worker is SIGKILLed mid-load, each callId reaching the outside once", async () => {
  const doomed = start(["worker", "--toolset", toolsFile]);
  start(["worker", "--toolset", toolsFile]);
  const steps = await compileScript({ file: path.join(root, "libs/cli/test/fixtures/steps.ts") });
  const ids: string[] = [];
  for (let i = 0; i < 40; i++)
    ids.push((await api.runs.start({ script: steps, input: { id: i }, toolset: "shop" })).id);
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  doomed.kill("SIGKILL");
  for (const id of ids) {
    await expect
      .poll(async () => (await api.runs.get(id)).status, { timeout: 90_000, interval: 250 })
      .toBe("completed");
  }
  for (const [callId, bodies] of seen) expect(bodies.size, callId).toBe(1);
  expect(seen.size).toBeGreaterThanOrEqual(40 * 6);
}, 150_000);
