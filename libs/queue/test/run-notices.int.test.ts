/**
 * Change notices on a real Redis (issue 18): a worker's commits cost Redis nothing unless an API
 * waits on the run. A run's first commit asks Redis for its watches; later commits go by the
 * watches the worker heard on the broadcast channel; a watch heard for a run already seen is
 * answered at once (its commit may have fallen between the API's read and the broadcast); after
 * the worker's subscription is lost, every commit asks Redis again.
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { RunNoticePublisher, RunNoticeSubscriber } from "../src/index.js";

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const prefix = `rewind-test-notices-${randomBytes(4).toString("hex")}`;
const admin = new Redis(REDIS_URL);
const heard: string[] = [];
let api: RunNoticeSubscriber;
let worker: RunNoticePublisher;

beforeAll(async () => {
  api = await RunNoticeSubscriber.connect({ redisUrl: REDIS_URL, prefix }, (ids) =>
    heard.push(...ids),
  );
  worker = RunNoticePublisher.connect({ redisUrl: REDIS_URL, prefix });
  await worker.listeningNow();
});

afterAll(async () => {
  api.close();
  worker.close();
  const keys = await admin.keys(`${prefix}*`);
  if (keys.length > 0) await admin.del(...keys);
  admin.disconnect();
});

async function until(what: string, check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const heardOf = (runId: string) => heard.filter((id) => id === runId).length;

/** A commit of a run not watched; once Redis has answered, the next one is skipped. */
async function seen(runId: string): Promise<void> {
  worker.changed(runId);
  const skipped = worker.skipped;
  await until(`${runId} to be seen`, () => {
    if (worker.skipped > skipped) return true;
    worker.changed(runId); // asks again until Redis's answer is in
    return false;
  });
}

it("announces a run watched before its first commit, asking Redis once", async () => {
  await api.watch("run-a", 5_000);
  worker.changed("run-a");
  await until("run-a's notice", () => heardOf("run-a") === 1);
  // The answer says it is watched: the next commit is announced without asking.
  await pause(20);
  const skipped = worker.skipped;
  worker.changed("run-a");
  await until("run-a's second notice", () => heardOf("run-a") === 2);
  expect(worker.skipped).toBe(skipped);
});

it("skips commits no one waits on, and hears a later watch at once", async () => {
  await seen("run-b");
  const skipped = worker.skipped;
  for (let i = 0; i < 5; i++) worker.changed("run-b");
  await until("five skipped commits", () => worker.skipped === skipped + 1);
  expect(heardOf("run-b")).toBe(0);
  // The watch is broadcast: the worker answers it at once (a commit may have fallen between
  // the API's read and the broadcast), then announces each commit from what it heard.
  await api.watch("run-b", 5_000);
  await until("run-b's catch-up notice", () => heardOf("run-b") === 1);
  worker.changed("run-b");
  await until("run-b's notice", () => heardOf("run-b") === 2);
});

it("announces only the end to a result's wait", async () => {
  await seen("run-c");
  await api.watch("run-c", 5_000, true);
  worker.changed("run-c");
  await pause(100);
  // A run that has not ended here gets no catch-up for an end-only watch, and its commits none.
  expect(heardOf("run-c")).toBe(0);
  worker.changed("run-c", true);
  await until("run-c's end", () => heardOf("run-c") === 1);
  // The end is remembered: another wait on it is answered at once.
  await api.watch("run-c", 5_000, true);
  await until("run-c's catch-up", () => heardOf("run-c") === 2);
});

it("asks Redis again for every run after losing its subscription", async () => {
  await seen("run-d");
  const clients = await admin.client("LIST");
  const id = /id=(\d+) .*name=(\S+)/.exec(
    String(clients)
      .split("\n")
      .find((line) => line.includes(`name=${prefix}:run-watches`))!,
  )?.[1];
  expect(id).toBeDefined();
  await admin.client("KILL", "ID", id!);
  await until("the subscription's loss", () => !worker.isListening);
  // Broadcast while the worker hears nothing: only the key tells. Had the worker kept what it
  // had seen, it would take run-d for unwatched and skip its commit.
  await api.watch("run-d", 5_000);
  await worker.listeningNow();
  worker.changed("run-d");
  await until("run-d's notice, from the keys", () => heardOf("run-d") === 1);
});
