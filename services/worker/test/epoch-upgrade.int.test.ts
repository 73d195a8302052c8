/**
 * Issue 12's upgrade test: a deployment moves from Node 20 to Node 24 with runs open. Runs start
 * in epoch 1, the first Node 20 epoch (one sleeping on a timer, one waiting for a signal, one whose
 * script read Math.E, which epoch 1 reads as undefined and Node 24 computes); the API starts them
 * there as told (REWIND_NEW_RUN_EPOCH=1: Node 20's new runs start in epoch 2 now, whose Math.E
 * would move); the Node 20 worker stops; a Node 24 worker starts;
 * the operator path (`rewind epochs migrate`, a real CLI process) checks the runs on that worker
 * and moves the two that replay the same, refusing the third; the moved runs complete on Node 24,
 * and the counting server saw each callId invoked once.
 *
 * The Node 24 worker runs from a checkout installed and built with Node 24 (node_modules differ
 * per Node: isolated-vm 7 there, 5.0.4 here): REWIND_NODE24_ROOT names it (.ci/runtimes passes
 * its Node 24 clone). Without it the test is skipped, saying so.
 */
import { spawn, spawnSync } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileScript } from "@rewind/sandbox";
import { openStore } from "@rewind/store";
import { Cluster, root, until } from "./cluster-harness.js";

const node24Root = process.env.REWIND_NODE24_ROOT;
const fixture = (name: string) =>
  compileScript({ file: path.join(root, "services/worker/test/fixtures/upgrade", name) });

if (node24Root === undefined)
  console.log(
    "epoch-upgrade: skipped (set REWIND_NODE24_ROOT to a checkout of this commit installed and " +
      "built with Node 24, as .ci/runtimes does)",
  );

describe.skipIf(node24Root === undefined)("upgrading Node 20 to Node 24 with runs open", () => {
  const cluster = new Cluster({
    // The runs of a deployment that has been on Node 20 since before epoch 2: epoch 1's.
    env: { REWIND_LEASE_MS: "3000", REWIND_STICKY_TIMEOUT_MS: "200", REWIND_NEW_RUN_EPOCH: "1" },
    // Two runtimes' processes start on a loaded machine: give them time.
    startupMs: 90_000,
  });
  let nodeBin = "";

  beforeAll(async () => {
    const installed = spawnSync(process.execPath, ["scripts/install-node.mjs", "--bin", "24"], {
      cwd: root,
      encoding: "utf8",
    });
    if (installed.status !== 0) throw new Error(`install-node.mjs: ${installed.stderr}`);
    nodeBin = installed.stdout.trim();
    await cluster.start();
  }, 120_000);
  afterAll(() => cluster.close(), 60_000);

  /** `rewind epochs migrate …` as an operator runs it: its exit code and what it printed. */
  const migrate = (args: string[]) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [path.join(root, "libs/cli/dist/main.js"), "epochs", "migrate", ...args],
        {
          env: { ...process.env, REWIND_URL: cluster.apiUrl, REWIND_TOKEN: cluster.token },
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
      child.once("exit", (code) => resolve({ code, out }));
    });

  it("moves the runs that replay the same, refuses the one that cannot, and the moved ones complete", async () => {
    const { worker: node20 } = await cluster.startWorker();
    const api = cluster.api;
    const [timer, signal, mathE] = await Promise.all([
      fixture("timer.ts").then((script) =>
        api.runs.start({ script, input: { id: "long-timer" }, toolset: "shop" }),
      ),
      fixture("signal.ts").then((script) =>
        api.runs.start({ script, input: { id: "signal" }, toolset: "shop" }),
      ),
      fixture("math-e.ts").then((script) =>
        api.runs.start({ script, input: { id: "math-e" }, toolset: "shop" }),
      ),
    ]);
    const ids = [timer.id, signal.id, mathE.id];
    const oldEpoch = (await api.runs.get(timer.id)).epoch;
    expect(oldEpoch).toBe(1);
    // Each made its first call and now waits: on its timer, its signal.
    await until(
      "the three runs to wait",
      async () =>
        (await Promise.all(ids.map((id) => api.runs.get(id)))).every((r) => r.status === "waiting"),
      60_000,
    );

    // The upgrade: the Node 20 worker goes, a Node 24 worker comes.
    await node20.kill("SIGTERM");
    const { worker: node24 } = await cluster.startWorker({
      runtime: { nodeBin, root: node24Root! },
    });
    const served = await until(
      "the Node 24 worker to be seen",
      async () =>
        (await api.epochs()).epochs.find(
          (e) => e.epoch !== oldEpoch && (e.liveWorkers ?? []).length > 0,
        ),
      30_000,
    );
    const newEpoch = served.epoch;
    expect(served).toMatchObject({ epoch: 3, released: expect.any(String) }); // Node 24's, released
    const before = (await api.epochs()).epochs.find((e) => e.epoch === oldEpoch)!;
    expect(before.runs.open).toBe(3);
    expect(before.workers).toBe(0);

    // A dry run first: it says what would move, and moves nothing.
    const dry = await migrate([String(oldEpoch), "--to", String(newEpoch), "--dry-run"]);
    expect(dry.out).toMatch(new RegExp(`would move\\s+${timer.id}`));
    expect(dry.out).toMatch(new RegExp(`would move\\s+${signal.id}`));
    expect(dry.out).toMatch(new RegExp(`stays\\s+${mathE.id}\\s+diverges at seq 2`));
    expect(dry.code).toBe(1); // not every run would move
    expect((await api.runs.get(timer.id)).epoch).toBe(oldEpoch);

    const moved = await migrate([String(oldEpoch), "--to", String(newEpoch)]);
    expect(moved.out, node24.log).toMatch(new RegExp(`moved\\s+${timer.id}`));
    expect(moved.out).toMatch(new RegExp(`moved\\s+${signal.id}`));
    expect(moved.out).toMatch(new RegExp(`stays\\s+${mathE.id}\\s+diverges at seq 2`));
    expect(moved.out).toContain("2 of 3 run(s) moved");
    expect(moved.code).toBe(1);

    // Each move is recorded: who, from where to where, the seq its replay was checked at.
    const store = await openStore({ databaseUrl: cluster.databaseUrl });
    try {
      for (const id of [timer.id, signal.id]) {
        const [move] = await store.epochMoves(id);
        expect(move).toMatchObject({ from: oldEpoch, to: newEpoch, by: expect.any(String) });
        // The seq the CLI printed: the journal's end when it was replayed.
        const printed = new RegExp(`moved\\s+${id}\\s+\\(replayed to seq (\\d+)\\)`).exec(
          moved.out,
        );
        expect(move!.checkedSeq).toBe(Number(printed?.[1]));
      }
      expect(await store.epochMoves(mathE.id)).toEqual([]);
    } finally {
      await store.close();
    }

    // The moved runs go on on Node 24: the signal, then the timer when it is due.
    await api.runs.signal(signal.id, "go", { note: "after the upgrade" });
    for (const id of [signal.id, timer.id]) {
      const run = await until(
        `run ${id} to complete on Node 24`,
        async () => {
          const r = await api.runs.get(id);
          return r.status === "completed" ? r : undefined;
        },
        90_000,
      ).catch((error: Error) => {
        throw new Error(`${error.message}\n${node24.log}`);
      });
      expect(run.epoch).toBe(newEpoch);
    }
    // The one that cannot move waits for a worker of its own epoch, and says so.
    const after = (await api.runs.get(mathE.id)).status;
    expect(after).toBe("waiting");
    const old = (await api.epochs()).epochs.find((e) => e.epoch === oldEpoch)!;
    expect(old).toMatchObject({ runs: { open: 1 }, workers: 0, waiting: 1 });

    // Five calls in all, each reached the outside once.
    expect([...cluster.counter.seen.values()].map((c) => c.calls)).toEqual([1, 1, 1, 1, 1]);
  }, 300_000);
});
