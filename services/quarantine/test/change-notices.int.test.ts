/**
 * The quarantine service's commits are announced like a worker's (issue 18): a client waiting
 * on a quarantined run (its result, its journal) hears of a give-up or a release from the
 * service's change notice at once, not on an API's backstop poll. The real composition root
 * (`startQuarantineService`) on a real Postgres and Redis; the runs are quarantined by a worker
 * with a deliberate platform bug, as in quarantine.int.test.ts.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { RunNoticeSubscriber } from "@rewind/queue";
import { compileScript } from "@rewind/sandbox";
import { defineToolset } from "@rewind/sdk";
import { startQuarantineService } from "../src/index.js";
import { RANDOM_BUG, REDIS_URL, startCluster, until, type Api, type Cluster } from "./harness.js";

const toolset = defineToolset("orders", { note: (args: { step: number }) => args.step });
const SCRIPT = `import { tools, waitForSignal } from "rewind";
export default async function main() {
  await tools.note({ step: 1, r: Math.random() });
  await waitForSignal("go");
  return "done";
}
`;

let cluster: Cluster;
let api: Api;
const post = async (url: string, payload?: object) =>
  api.app.inject({
    method: "POST",
    url,
    headers: { authorization: `Bearer ${cluster.token}` },
    ...(payload === undefined ? {} : { payload }),
  });

/** Two runs quarantined by a worker that answers Math.random differently than when recorded. */
async function quarantinedRuns(): Promise<string[]> {
  const script = await compileScript({ source: SCRIPT, filename: "notices.ts" });
  const good = await cluster.startWorker({ name: "good" });
  const ids: string[] = [];
  for (let i = 0; i < 2; i++) {
    const created = await post("/v1/runs", { script, toolset: "orders" });
    expect(created.statusCode).toBe(201);
    ids.push(created.json<{ id: string }>().id);
  }
  const status = async (id: string) => (await cluster.store.getRun(id))?.status;
  for (const id of ids) await until(async () => (await status(id)) === "waiting", `${id} waits`);
  await good.close();
  const buggy = await cluster.startWorker({ name: "buggy", bug: RANDOM_BUG });
  for (const id of ids) expect((await post(`/v1/runs/${id}/signals/go`, {})).statusCode).toBe(202);
  for (const id of ids)
    await until(async () => (await status(id)) === "quarantined", `${id} quarantined`);
  await buggy.close();
  return ids;
}

beforeAll(async () => {
  cluster = await startCluster([toolset]);
  api = await cluster.startApi();
}, 60_000);
afterAll(async () => cluster?.close(), 60_000);

it("a give-up and a release each reach the runs' watchers as a notice", async () => {
  const [givenUp, released] = (await quarantinedRuns()) as [string, string];
  const heard: string[] = [];
  const subscriber = await RunNoticeSubscriber.connect(
    { redisUrl: REDIS_URL, prefix: cluster.prefix },
    (runIds) => heard.push(...runIds),
  );
  const service = await startQuarantineService({
    env: {
      DATABASE_URL: cluster.url,
      REDIS_URL,
      REWIND_REDIS_PREFIX: cluster.prefix,
      REWIND_QUARANTINE_POLL_MS: "50",
    },
  });
  try {
    // A result's wait hears only the commit that ends the run; a journal stream hears every one.
    await subscriber.watch(givenUp, 30_000, true);
    await subscriber.watch(released, 30_000);
    expect(
      (await post(`/v1/quarantine/${givenUp}/give-up`, { reason: "by hand" })).statusCode,
    ).toBe(200);
    await until(() => heard.includes(givenUp), `a notice for the given-up run ${givenUp}`);
    expect((await cluster.store.getRun(givenUp))?.status).toBe("failed");
    expect((await post(`/v1/quarantine/${released}/release`)).statusCode).toBe(200);
    await until(() => heard.includes(released), `a notice for the released run ${released}`);
  } finally {
    await service.close();
    subscriber.close();
  }
}, 120_000);

it("announces nothing with REWIND_CHANGE_NOTICES=off", async () => {
  const [givenUp] = (await quarantinedRuns()) as [string, string];
  const heard: string[] = [];
  const subscriber = await RunNoticeSubscriber.connect(
    { redisUrl: REDIS_URL, prefix: cluster.prefix },
    (runIds) => heard.push(...runIds),
  );
  const service = await startQuarantineService({
    env: {
      DATABASE_URL: cluster.url,
      REDIS_URL,
      REWIND_REDIS_PREFIX: cluster.prefix,
      REWIND_QUARANTINE_POLL_MS: "50",
      REWIND_CHANGE_NOTICES: "off",
    },
  });
  try {
    await subscriber.watch(givenUp, 30_000, true);
    expect(
      (await post(`/v1/quarantine/${givenUp}/give-up`, { reason: "by hand" })).statusCode,
    ).toBe(200);
    await until(
      async () => (await cluster.store.getRun(givenUp))?.status === "failed",
      `${givenUp} given up`,
    );
    // A notice would have been published right after that commit.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(heard).not.toContain(givenUp);
  } finally {
    await service.close();
    subscriber.close();
  }
}, 120_000);
