import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
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

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the in-process queue", () => {
  it("collapses rings while one waits, and hands each run to the handler", async () => {
    const queue = new InProcessQueue();
    await queue.ring({ runId: "a", epoch: 1 });
    await queue.ring({ runId: "a", epoch: 1 });
    await queue.ring({ runId: "b", epoch: 1 });
    const seen: string[] = [];
    queue.consume(async (runId) => void seen.push(runId));
    await until(() => seen.length === 2);
    expect(seen).toEqual(["a", "b"]);
    await queue.ring({ runId: "a", epoch: 1 });
    await until(() => seen.length === 3);
    await queue.close();
  });
});

describe("the BullMQ queue on a real Redis", () => {
  it("delivers rings as activations; rings while one waits collapse; a flushed Redis loses only rings", async () => {
    const queue = await BullMqQueue.connect({ redisUrl: REDIS_URL, prefix });
    for (let i = 0; i < 3; i++) await queue.ring({ runId: "run-a", epoch: 1 });
    await queue.ring({ runId: "run-b", epoch: 1 });
    const seen: string[] = [];
    queue.consume(async (runId) => void seen.push(runId), { concurrency: 4 });
    await until(() => seen.length >= 2);
    await pause(200);
    expect(seen.sort()).toEqual(["run-a", "run-b"]);

    // A done job is gone: the next ring is a new activation.
    await queue.ring({ runId: "run-a", epoch: 1 });
    await until(() => seen.length === 3);

    // Its keys wiped (as FLUSHALL would): rings made later still arrive.
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
    await queue.ring({ runId: "run-c", epoch: 1 });
    await until(() => seen.includes("run-c"), 10_000);
    await queue.close();
  });

  it("hands a new run's first-ring hint to the handler, on either queue", async () => {
    const first = {
      namespace: "ns",
      scriptHash: "sha256:ab",
      seed: "0".repeat(64),
      at: 7,
      epoch: 1,
    };
    for (const queue of [
      await BullMqQueue.connect({ redisUrl: REDIS_URL, prefix: `${prefix}-first` }),
      new InProcessQueue(),
    ]) {
      await queue.ring({ runId: "new", epoch: 1, leases: 0, first });
      await queue.ring({ runId: "old", epoch: 1, leases: 3 });
      const seen = new Map<string, unknown>();
      queue.consume(async (runId, hint) => void seen.set(runId, hint));
      await until(() => seen.size === 2);
      expect(seen.get("new")).toEqual(first);
      expect(seen.get("old")).toBeUndefined();
      await queue.close();
    }
  });

  it("gives each epoch its own queue: a worker takes only the epochs it supports", async () => {
    const p = `${prefix}-epochs`;
    const api = await BullMqQueue.connect({ redisUrl: REDIS_URL, prefix: p });
    const old = await BullMqQueue.connect({ redisUrl: REDIS_URL, prefix: p });
    const next = await BullMqQueue.connect({ redisUrl: REDIS_URL, prefix: p });
    const seen: string[] = [];
    old.consume(async (runId) => void seen.push(`1:${runId}`), { epochs: [1] });
    next.consume(async (runId) => void seen.push(`2:${runId}`), { epochs: [2] });
    await api.ring({ runId: "run-old", epoch: 1 });
    await api.ring({ runId: "run-new", epoch: 2 });
    await api.ring({ runId: "run-later", epoch: 3 }); // no worker supports epoch 3: it waits
    await until(() => seen.length === 2);
    await pause(300);
    expect(seen.sort()).toEqual(["1:run-old", "2:run-new"]);
    const waiting = await admin.llen(`${p}:activations-epoch-3:wait`);
    expect(waiting).toBe(1);
    await Promise.all([api.close(), old.close(), next.close()]);
  });

  it("sends a hot run's activation to its holder, and to anyone when the holder is gone", async () => {
    const p = `${prefix}-sticky`;
    const api = await BullMqQueue.connect({ redisUrl: REDIS_URL, prefix: p, stickyTimeoutMs: 500 });
    const holder = await BullMqQueue.connect({ redisUrl: REDIS_URL, prefix: p });
    const other = await BullMqQueue.connect({ redisUrl: REDIS_URL, prefix: p });
    const seen: string[] = [];
    holder.consume(async (runId) => void seen.push(`holder:${runId}`), { holder: "worker-h" });
    other.consume(async (runId) => void seen.push(`other:${runId}`), { holder: "worker-o" });
    await pause(200); // subscriptions in place

    // Held hot: straight to the holder, and its fallback job is cancelled (nothing else runs it).
    await api.ring({ runId: "run-hot", epoch: 1, holder: "worker-h" });
    await until(() => seen.length === 1);
    await pause(900);
    expect(seen).toEqual(["holder:run-hot"]);

    // The holder is gone: the activation goes to the shared queue at once.
    await holder.close();
    const before = Date.now();
    await api.ring({ runId: "run-orphan", epoch: 1, holder: "worker-h" });
    await until(() => seen.includes("other:run-orphan"));
    expect(Date.now() - before).toBeLessThan(450);

    // The holder listens but never takes it (stalled): the fallback fires after the timeout.
    const stalled = admin.duplicate();
    await stalled.subscribe(`${p}:sticky:worker-stalled`);
    await api.ring({ runId: "run-stalled", epoch: 1, holder: "worker-stalled" });
    await until(() => seen.includes("other:run-stalled"), 5_000);
    stalled.disconnect();
    await Promise.all([api.close(), other.close()]);
  });

  it("hands a new run straight to a worker of its epoch with room for it, else to the queue", async () => {
    const p = `${prefix}-direct`;
    const api = await BullMqQueue.connect({ redisUrl: REDIS_URL, prefix: p, stickyTimeoutMs: 500 });
    const worker = await BullMqQueue.connect({ redisUrl: REDIS_URL, prefix: p });
    const elsewhere = await BullMqQueue.connect({ redisUrl: REDIS_URL, prefix: p });
    const first = (epoch: number) => ({
      namespace: "ns",
      scriptHash: "sha256:ab",
      seed: "0".repeat(64),
      at: 7,
      epoch,
    });
    const seen: string[] = [];
    const releases: (() => void)[] = [];
    worker.consume(
      async (runId, hint) => {
        seen.push(`${runId}:${hint?.at}`);
        if (runId.startsWith("slow")) await new Promise<void>((r) => releases.push(r));
      },
      {
        holder: "worker-w",
        epochs: [1],
        concurrency: 2,
        onTaken: (runId, { delivery }) => seen.push(`${runId}:${delivery}`),
      },
    );
    // A worker of epoch 2 only: never offered a run of epoch 1.
    elsewhere.consume(async (runId) => void seen.push(`elsewhere:${runId}`), {
      holder: "worker-e",
      epochs: [2],
    });
    const listening = async (holder: string, epoch: number) =>
      ((await admin.pubsub("NUMSUB", `${p}:first:${epoch}:${holder}`)) as [string, number])[1];
    for (let i = 0; i < 50 && (await listening("worker-w", 1)) === 0; i++) await pause(20);

    // What is not a ring, published where rings go, is ignored (and takes nothing down).
    for (const channel of [`${p}:first:1:worker-w`, `${p}:sticky:worker-w`])
      for (const text of ["not json", "null", '{"runId":1}']) await admin.publish(channel, text);

    // Straight to the worker, its hint with it; its offer withdrawn, nothing else runs it.
    await api.ring({ runId: "new-1", epoch: 1, leases: 0, first: first(1) });
    await until(() => seen.includes("new-1:7"));
    await pause(700);
    expect(seen).toEqual(["new-1:direct", "new-1:7"]);
    expect(await admin.keys(`${p}:activations-epoch-1:new-1*`)).toEqual([]);
    expect(await admin.zcard(`${p}:first-offers:1`)).toBe(0); // taken: nothing left to sweep

    // Two being handled fill its room: it stops listening. A third offered at the same moment
    // (on its way as it stopped, or refused by PUBLISH) goes to the queue at once, not once its
    // offer is due: still to this worker, whose queue has room. It listens again once they end.
    const rung = Date.now();
    await Promise.all(
      ["slow-1", "slow-2", "slow-3"].map((runId) =>
        api.ring({ runId, epoch: 1, leases: 0, first: first(1) }),
      ),
    );
    await until(() => releases.length === 3);
    expect(Date.now() - rung).toBeLessThan(450);
    const how = (runId: string) => seen.find((s) => s.startsWith(`${runId}:`) && !s.endsWith(":7"));
    expect(["slow-1", "slow-2", "slow-3"].map(how).sort()).toEqual([
      "slow-1:direct",
      "slow-2:direct",
      "slow-3:shared",
    ]);
    for (let i = 0; i < 50 && (await listening("worker-w", 1)) > 0; i++) await pause(20);
    expect(await listening("worker-w", 1)).toBe(0);
    for (const release of releases) release();
    for (let i = 0; i < 50 && (await listening("worker-w", 1)) === 0; i++) await pause(20);
    expect(await listening("worker-w", 1)).toBe(1);
    expect(await admin.zcard(`${p}:first-offers:1`)).toBe(0);
    await api.ring({ runId: "new-3", epoch: 1, leases: 0, first: first(1) });
    await until(() => seen.includes("new-3:7"));
    expect(seen).toContain("new-3:direct");

    // No worker of epoch 3 listens: its new run waits in its queue.
    await api.ring({ runId: "new-4", epoch: 3, leases: 0, first: first(3) });
    expect(await admin.llen(`${p}:activations-epoch-3:wait`)).toBe(1);

    // A worker that stops is offered nothing more: its new runs go to the queue at once.
    await worker.close();
    const other = await BullMqQueue.connect({ redisUrl: REDIS_URL, prefix: p });
    other.consume(async (runId) => void seen.push(`other:${runId}`), { epochs: [1] });
    let before = Date.now();
    await api.ring({ runId: "new-5", epoch: 1, leases: 0, first: first(1) });
    await until(() => seen.includes("other:new-5"));
    expect(Date.now() - before).toBeLessThan(450);

    // One that listens but never takes it (stalled): its offer, once due, is swept to the queue.
    const stalled = admin.duplicate();
    await stalled.subscribe(`${p}:first:1:worker-stalled`);
    await pause(1_100); // the API's list of listeners, read again
    before = Date.now();
    await api.ring({ runId: "new-6", epoch: 1, leases: 0, first: first(1) });
    await until(() => seen.includes("other:new-6"), 5_000);
    expect(Date.now() - before).toBeGreaterThanOrEqual(500);
    stalled.disconnect();
    expect(seen.filter((s) => s.startsWith("elsewhere:"))).toEqual([]);
    await Promise.all([api.close(), elsewhere.close(), other.close()]);
  });

  it("never lets an activation a dead worker left behind swallow the ring of the run's next lease", async () => {
    const p = `${prefix}-generations`;
    const api = await BullMqQueue.connect({ redisUrl: REDIS_URL, prefix: p });
    // A worker takes the activation and dies in it: its job stays active (locked) for a while.
    const dead = await BullMqQueue.connect({ redisUrl: REDIS_URL, prefix: p });
    let taken = 0;
    let release = () => {};
    const hung = new Promise<void>((resolve) => (release = resolve));
    dead.consume(
      () => {
        taken++;
        return hung; // does not end, as a killed process's activation would not
      },
      { concurrency: 1 },
    );
    await api.ring({ runId: "run-g", epoch: 1, leases: 0 });
    await until(() => taken === 1);
    const alive = await BullMqQueue.connect({ redisUrl: REDIS_URL, prefix: p });
    const seen: string[] = [];
    alive.consume(async (runId) => void seen.push(runId));
    // A ring of the same generation is a duplicate of the active job: it collapses into it.
    await api.ring({ runId: "run-g", epoch: 1, leases: 0 });
    await pause(300);
    expect(seen).toEqual([]);
    // The dead worker had taken the lease (1): the reconciler's ring is a new activation.
    await api.ring({ runId: "run-g", epoch: 1, leases: 1 });
    await until(() => seen.length === 1);
    expect(seen).toEqual(["run-g"]);
    expect(taken).toBe(1);
    release();
    await Promise.all([api.close(), alive.close(), dead.close()]);
  });

  it("gives an activation back within its claim when the worker that took it is killed in it", async () => {
    // The worker dies after taking the job and before taking the run's lease: the lease
    // generation is unchanged, so every ring of the run collapses into the dead worker's job
    // until its claim runs out. The claim follows the lease, not BullMQ's 30 s default.
    const p = `${prefix}-killed`;
    const claimMs = 1_000;
    const api = await BullMqQueue.connect({ redisUrl: REDIS_URL, prefix: p });
    const fixture = fileURLToPath(new URL("./fixtures/hung-consumer.mjs", import.meta.url));
    const child = spawn(process.execPath, [fixture, REDIS_URL, p, String(claimMs)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    await until(() => out.includes("consuming"), 15_000);
    await api.ring({ runId: "run-k", epoch: 1, leases: 3 });
    await until(() => out.includes("taken run-k"), 15_000);
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;

    const alive = await BullMqQueue.connect({ redisUrl: REDIS_URL, prefix: p });
    const seen: number[] = [];
    const killedAt = Date.now();
    alive.consume(async () => void seen.push(Date.now() - killedAt), { claimMs });
    // The reconciler rings the run again and again; every ring collapses into the claimed job.
    const reconciler = setInterval(
      () => void api.ring({ runId: "run-k", epoch: 1, leases: 3 }).catch(() => {}),
      200,
    );
    try {
      await until(() => seen.length > 0, 15_000);
    } finally {
      clearInterval(reconciler);
    }
    // Given back by the stalled check within about two claims (the lock ran out, then a check).
    expect(seen[0]).toBeLessThan(4 * claimMs);
    await Promise.all([api.close(), alive.close()]);
  }, 40_000);

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

describe("the backlog an autoscaler reads", () => {
  it("counts waiting and due delayed activations per epoch, with no worker running, and not fallbacks still to come", async () => {
    const own = `${prefix}-backlog`;
    const queue = await BullMqQueue.connect({
      redisUrl: REDIS_URL,
      prefix: own,
      stickyTimeoutMs: 300,
    });
    try {
      expect(await queue.backlog([7, 8])).toEqual(
        new Map([
          [7, 0],
          [8, 0],
        ]),
      );
      for (const runId of ["a", "b", "c"]) await queue.ring({ runId, epoch: 7 });
      await queue.ring({ runId: "a", epoch: 7 }); // collapses into the waiting one
      await queue.ring({ runId: "d", epoch: 8 });
      // A hot run's ring whose holder is gone: a plain job; one whose holder listens would leave
      // a fallback that is delayed (not backlog) until it is due.
      await queue.ring({ runId: "e", epoch: 8, holder: "nobody-listens" });
      expect(await queue.backlog([7, 8])).toEqual(
        new Map([
          [7, 3],
          [8, 2],
        ]),
      );
      const listener = await BullMqQueue.connect({ redisUrl: REDIS_URL, prefix: own });
      // Listening on its channel but taking no jobs of epoch 9's queue: the ring's fallback waits.
      listener.consume(async () => {}, { epochs: [10], holder: "holder-1" });
      await pause(100);
      await queue.ring({ runId: "f", epoch: 9, holder: "holder-1" });
      expect((await queue.backlog([9])).get(9)).toBe(0);
      await pause(400); // the fallback is due now: no worker of epoch 9 promoted it, it counts
      expect((await queue.backlog([9])).get(9)).toBe(1);
      await listener.close();
      // A new run offered to a worker that listens and never takes it (stalled): not backlog
      // until its offer is due, then counted (no worker of its epoch swept it to the queue).
      const stalled = admin.duplicate();
      await stalled.subscribe(`${own}:first:11:stalled`);
      const first = { namespace: "ns", scriptHash: "sha256:ab", seed: "0".repeat(64), at: 1 };
      await queue.ring({ runId: "g", epoch: 11, leases: 0, first: { ...first, epoch: 11 } });
      expect((await queue.backlog([11])).get(11)).toBe(0);
      await pause(400);
      expect((await queue.backlog([11])).get(11)).toBe(1);
      stalled.disconnect();
    } finally {
      await queue.close();
      const keys = await admin.keys(`${own}*`);
      if (keys.length > 0) await admin.del(...keys);
    }
  });
});
