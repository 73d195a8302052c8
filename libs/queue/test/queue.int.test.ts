import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { BullMqQueue, InProcessQueue } from "../src/index.js";

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const prefix = `rewind-test-${randomBytes(4).toString("hex")}`;
const admin = new Redis(REDIS_URL);

afterAll(async () => {
  const keys = await admin.keys(`${prefix}*`);
  if (keys.length > 0) await admin.del(...keys);
  admin.disconnect();
});

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("the in-process queue", () => {
  it("collapses rings while one waits, and hands each run to the handler", async () => {
    const queue = new InProcessQueue();
    await queue.ring("a");
    await queue.ring("a");
    await queue.ring("b");
    const seen: string[] = [];
    queue.consume(async (runId) => void seen.push(runId));
    await until(() => seen.length === 2);
    expect(seen).toEqual(["a", "b"]);
    await queue.ring("a");
    await until(() => seen.length === 3);
    await queue.close();
  });
});

describe("the BullMQ queue on a real Redis", () => {
  it("delivers rings as activations; rings while one waits collapse; a flushed Redis loses only rings", async () => {
    const queue = await BullMqQueue.connect({ redisUrl: REDIS_URL, prefix, epoch: 1 });
    for (let i = 0; i < 3; i++) await queue.ring("run-a");
    await queue.ring("run-b");
    const seen: string[] = [];
    queue.consume(async (runId) => void seen.push(runId), 4);
    await until(() => seen.length >= 2);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(seen.sort()).toEqual(["run-a", "run-b"]);

    // A done job is gone: the next ring is a new activation.
    await queue.ring("run-a");
    await until(() => seen.length === 3);

    // Its keys wiped (as FLUSHALL would): rings made later still arrive.
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
    await queue.ring("run-c");
    await until(() => seen.includes("run-c"), 10_000);
    await queue.close();
  });

  it("refuses a Redis that may evict keys, saying how to fix it", async () => {
    const [, policy] = (await admin.config("GET", "maxmemory-policy")) as string[];
    await admin.config("SET", "maxmemory-policy", "allkeys-lru");
    try {
      await expect(BullMqQueue.connect({ redisUrl: REDIS_URL, prefix })).rejects.toThrow(
        /maxmemory-policy allkeys-lru.*Set it to noeviction/,
      );
    } finally {
      await admin.config("SET", "maxmemory-policy", policy ?? "noeviction");
    }
  });

  it("says when Redis cannot be reached", async () => {
    await expect(BullMqQueue.connect({ redisUrl: "redis://127.0.0.1:1", prefix })).rejects.toThrow(
      /Could not reach Redis.*unset REDIS_URL/,
    );
  });
});
