import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { compileScript } from "@rewind/sandbox";
import { Rewind } from "@rewind/sdk";
import tools from "../../../examples/tools.js";
import { startDevPlatform, type DevPlatform } from "../src/index.js";

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const prefix = `rewind-dev-test-${randomBytes(4).toString("hex")}`;
const examples = fileURLToPath(new URL("../../../examples/", import.meta.url));
const admin = new Redis(REDIS_URL);
let dir: string;
let platform: DevPlatform;
let api: Rewind;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "rewind-dev-redis-"));
  platform = await startDevPlatform({
    port: 0,
    dataDir: dir,
    toolsets: [tools],
    redisUrl: REDIS_URL,
    redisPrefix: prefix,
  });
  api = new Rewind({ url: platform.url, token: platform.token });
});
afterAll(async () => {
  await platform.close();
  const keys = await admin.keys(`${prefix}*`);
  if (keys.length > 0) await admin.del(...keys);
  admin.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

it("runs through activations on Redis, and a wiped Redis loses no signal", async () => {
  const hello = await compileScript({ file: path.join(examples, "hello.ts") });
  const { id } = await api.runs.start({ script: hello, input: { name: "redis" }, toolset: "shop" });
  expect(await api.runs.result(id, "10s")).toMatchObject({
    status: "completed",
    result: { greeting: "hello, redis" },
  });
  // Started and awaited in one request; its first ring carries the script for its context.
  const executed = await api.runs.execute(
    { script: { hash: hello.hash }, input: { name: "again" }, toolset: "shop" },
    { wait: "10s" },
  );
  expect(executed).toMatchObject({
    created: true,
    status: "completed",
    ended: true,
    result: { greeting: "hello, again" },
  });

  const waiting = await compileScript({
    source: `import { waitForSignal } from "rewind";\nexport default async () => waitForSignal("go");`,
    filename: "w.ts",
  });
  const run = await api.runs.start({ script: waiting, toolset: "shop" });
  await expect.poll(async () => (await api.runs.get(run.id)).status).toBe("waiting");
  // Redis forgets everything (FLUSHALL of our keys), and the signal's ring is lost: the signal is
  // written to the inbox with no ring at all. Only the reconciler can deliver it now, and does.
  const keys = await admin.keys(`${prefix}*`);
  if (keys.length > 0) await admin.del(...keys);
  await platform.store.addInbox(run.id, { kind: "signal", name: "go", payload: { ok: true } });
  expect(await api.runs.result(run.id, "15s")).toMatchObject({
    status: "completed",
    result: { ok: true },
  });
});
