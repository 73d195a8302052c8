/**
 * GET /v1/runs with its filters, walked page by page: the same cases on PGlite
 * (runs-list.test.ts) and on Postgres (runs-list.int.test.ts).
 */
import { newRunId, newSeed } from "@rewind/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  SCRIPT,
  appendAsExecutor,
  completeRun,
  errorOf,
  openHarness,
  startRun,
  type Harness,
} from "./harness.js";

const ORDER = {
  entry: "order.ts",
  code: "var main = async () => 1; __rewind_register(main);",
  sourceMap: '{"version":3,"sources":["order.ts"],"mappings":""}',
};

interface View {
  id: string;
  status: string;
  script?: string;
  scriptHash: string;
  toolset: string;
  epoch: number;
  parent?: { runId: string; seq: number };
  createdAt: string;
}

export function runsListCases(options: { postgres: boolean }): void {
  let h: Harness;
  /** Every run made, newest first (the list's default order). */
  let all: View[] = [];

  beforeAll(async () => {
    h = await openHarness({ postgres: options.postgres });
    // 6 runs of hello.ts (toolset hello), 5 of order.ts (toolset shop); some end, some fail.
    for (let i = 0; i < 11; i++) {
      const order = i % 2 === 1;
      const id = await startRun(h, {
        script: order ? ORDER : SCRIPT,
        toolset: order ? "shop" : "hello",
      });
      if (i % 3 === 0) await completeRun(h.store, id);
      if (i % 3 === 1) await failRun(h, id, i === 4 ? "card 100% declined_x" : "card declined");
    }
    // A fork of the first run, of epoch 2 (as a migration between epochs would leave it).
    const first = (await list("order=oldest&limit=1")).runs[0]!;
    const fork = newRunId();
    await h.store.createRun({
      ttlMs: 60_000,
      started: {
        seq: 1,
        kind: "run.started",
        at: Date.now(),
        runId: fork,
        scriptHash: first.scriptHash,
        input: null,
        seed: newSeed(),
        epoch: 2,
        toolset: "hello",
        namespace: "acme",
        parent: { runId: first.id, seq: 1 },
      },
    });
    all = await walk("limit=500");
    expect(all).toHaveLength(12);
  }, 60_000);
  afterAll(async () => h?.close());

  async function list(query: string) {
    const response = await h.app.inject({ url: `/v1/runs?${query}`, headers: h.auth });
    if (response.statusCode !== 200) throw new Error(`${query}: ${response.body}`);
    return response.json<{ runs: View[]; next?: string; counts?: Record<string, number> }>();
  }

  /** Every page of a query, following `next` the way its order says. */
  async function walk(query: string): Promise<View[]> {
    const cursor = query.includes("order=oldest") ? "after" : "before";
    const seen: View[] = [];
    let next: string | undefined;
    for (let pages = 0; pages < 50; pages++) {
      const page = await list(next === undefined ? query : `${query}&${cursor}=${next}`);
      seen.push(...page.runs);
      if (page.next === undefined) return seen;
      expect(page.runs.length).toBeGreaterThan(0);
      next = page.next;
    }
    throw new Error(`${query}: more than 50 pages`);
  }

  const ids = (views: View[]) => views.map((v) => v.id);
  const expectWalk = async (query: string, keep: (v: View) => boolean) =>
    expect(ids(await walk(query))).toEqual(ids(all.filter(keep)));

  it("pages through every run newest first, and oldest first, each once", async () => {
    const sorted = [...ids(all)].sort().reverse();
    expect(ids(all)).toEqual(sorted);
    expect(ids(await walk("limit=5"))).toEqual(sorted);
    expect(ids(await walk("limit=3&order=oldest"))).toEqual([...sorted].reverse());
    // A page is exactly full at the end: no next page is promised that would be empty.
    const pages = await list("limit=12");
    expect(pages.runs).toHaveLength(12);
    expect(pages.next).toBeUndefined();
  });

  it("filters by script (file name or hash), toolset, status and epoch across pages", async () => {
    expect(all.filter((v) => v.script === "order.ts")).toHaveLength(5);
    expect(all.every((v) => v.script === "order.ts" || v.script === "hello.ts")).toBe(true);
    await expectWalk("script=order.ts&limit=2", (v) => v.script === "order.ts");
    const hash = all.find((v) => v.script === "hello.ts")!.scriptHash;
    await expectWalk(`script=${encodeURIComponent(hash)}&limit=2`, (v) => v.scriptHash === hash);
    await expectWalk("toolset=shop&limit=2", (v) => v.toolset === "shop");
    expect(ids(await walk("toolset=shop&limit=2&order=oldest"))).toEqual(
      ids(all.filter((v) => v.toolset === "shop")).reverse(),
    );
    await expectWalk("status=failed&limit=1", (v) => v.status === "failed");
    await expectWalk("status=failed,completed&limit=2", (v) =>
      ["failed", "completed"].includes(v.status),
    );
    await expectWalk("epoch=2", (v) => v.epoch === 2);
    await expectWalk(
      "script=order.ts&status=failed&limit=1",
      (v) => v.script === "order.ts" && v.status === "failed",
    );
    expect((await list("script=nothing.ts")).runs).toEqual([]);
  });

  it("filters forks, a run's forks, text in an id or an error, and a time range", async () => {
    const fork = all.find((v) => v.parent !== undefined)!;
    await expectWalk("fork=true", (v) => v.parent !== undefined);
    await expectWalk("fork=false&limit=4", (v) => v.parent === undefined);
    await expectWalk(`parent=${fork.parent!.runId}`, (v) => v.id === fork.id);
    await expectWalk("q=DECLINED&limit=2", (v) => v.status === "failed");
    // LIKE's wildcards are looked for as typed: only the one error that holds "100%" and "_x".
    expect((await walk("q=100%25")).map((v) => v.status)).toEqual(["failed"]);
    expect(await walk("q=e_l")).toEqual([]); // "_" as a wildcard would match "ecl"
    expect(await walk("q=%25")).toHaveLength(1);
    const some = all[4]!;
    await expectWalk(`q=${some.id.slice(-10).toUpperCase()}`, (v) => v.id === some.id);
    const from = all[8]!.createdAt;
    const to = all[2]!.createdAt;
    await expectWalk(`createdFrom=${from}&createdTo=${to}&limit=2`, (v) => {
      return v.createdAt >= from && v.createdAt < to;
    });
    await expectWalk(`createdFrom=${Date.parse(from)}&limit=3`, (v) => v.createdAt >= from);
  });

  it("counts the runs every filter but status finds, by status, over all pages", async () => {
    const byStatus = (views: View[]) => {
      const counts: Record<string, number> = {};
      for (const v of views) counts[v.status] = (counts[v.status] ?? 0) + 1;
      return counts;
    };
    const page = await list("counts=true&limit=1&status=failed&script=order.ts");
    expect(page.runs).toHaveLength(1);
    expect(page.counts).toEqual(byStatus(all.filter((v) => v.script === "order.ts")));
    expect((await list("limit=1")).counts).toBeUndefined();
    expect((await list("counts=true&q=nothing-has-this")).counts).toEqual({});
  });

  it("refuses filters it cannot apply, saying what to send, and lists no other namespace", async () => {
    const refused = async (query: string) => {
      const response = await h.app.inject({ url: `/v1/runs?${query}`, headers: h.auth });
      expect(response.statusCode, query).toBe(422);
      return errorOf(response).message;
    };
    expect(await refused("status=failed,sleeping")).toMatch(/"sleeping" is not a run status/);
    expect(await refused("createdFrom=yesterday")).toMatch(/ISO 8601 instant/);
    expect(await refused("epoch=0")).toMatch(/an epoch/);
    expect(await refused("fork=maybe")).toMatch(/"true"/);
    expect(await refused("before=a&after=b")).toMatch(/one way at a time/);
    expect(await refused("order=oldest&before=a")).toMatch(/pass `next` as `after`/);
    expect(await refused("q=%00")).toMatch(/NUL/);
    expect(await refused("color=red")).toBeTruthy();
    const theirs = await h.app.inject({ url: "/v1/runs?counts=true", headers: h.otherAuth });
    expect(theirs.json()).toEqual({ runs: [], counts: {} });
  });
}

async function failRun(h: Harness, id: string, message: string) {
  await appendAsExecutor(
    h.store,
    id,
    (seq) => [{ seq, kind: "run.failed", at: 2_000, error: { name: "Error", message } }],
    "failed",
  );
}
