/**
 * Write-ahead, proved by crashing between every pair of steps. A clean run counts how often each
 * fault point is reached; then, for every point and every occurrence, a run is crashed exactly
 * there and recovered by a new executor. Whatever the crash point: the run completes with the
 * clean run's journal, a completed call never runs again, and a call in flight runs again only
 * with its own callId and the same arguments.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineToolset, type JournalEntry, type ToolContext } from "@rewind/core";
import { Executor, WakeUp, type FaultPoint } from "@rewind/executor";
import { Sandbox, compileScript, type CompiledScript } from "@rewind/sandbox";
import type { Store } from "@rewind/store";
import { createRun, until, useTestStore } from "./harness.js";

const SOURCE = `import { tools, sleep } from "rewind";
export default async () => {
  const a = await tools.charge({ n: 1 });
  console.log("charged", a.n);
  await sleep(20);
  const [b, c] = await Promise.all([tools.charge({ n: 2 }), tools.charge({ n: 3 })]);
  return a.n + b.n + c.n;
};`;

let store: Store;
useTestStore("wal", (made) => (store = made));
let script: CompiledScript;
const sandbox = new Sandbox({ mode: "async" });
const invocations: { callId: string; body: string }[] = [];
const toolset = defineToolset("wal", {
  charge: async (args: { n: number }, ctx: ToolContext) => {
    invocations.push({ callId: ctx.callId, body: JSON.stringify(args) });
    return { n: args.n };
  },
});

beforeAll(async () => {
  script = await compileScript({ source: SOURCE, filename: "wal.ts" });
});
afterAll(() => sandbox.dispose());

const submit = () => createRun(store, script, { toolset: "wal" });

/** Errors the executors reported (they retry): what a timed-out scenario is explained by. */
const reported: string[] = [];
const executor = (owner: string, crashAt?: (point: FaultPoint) => boolean) =>
  new Executor({
    store,
    sandbox,
    toolsets: new Map([["wal", toolset]]),
    owner,
    stealLeases: true,
    onError: (runId, error) => reported.push(`${owner} ${runId}: ${(error as Error).message}`),
    ...(crashAt ? { crashAt } : {}),
  });

const ended = async (runId: string) => (await store.getRun(runId))?.status === "completed";

/** What a journal says, without wall-clock times or ids: equal for equal live runs. */
const shape = (journal: readonly JournalEntry[]) =>
  journal.map((e) => {
    const {
      at: _at,
      due: _due,
      callId: _callId,
      runId: _runId,
      seed: _seed,
      ...rest
    } = e as JournalEntry & Record<string, unknown>;
    return rest;
  });

describe("write-ahead: a crash between any two steps loses nothing and repeats no completed call", () => {
  const counts: Record<FaultPoint, number> = { produced: 0, committed: 0, acted: 0 };
  let clean: ReturnType<typeof shape>;

  it("runs cleanly and counts the steps", async () => {
    const runId = await submit();
    const exec = executor("clean", (point) => {
      counts[point]++;
      return false;
    });
    await exec.activate(runId);
    await until(() => ended(runId), 15_000, `${runId} to complete`);
    await exec.close();
    clean = shape(await store.readJournal(runId));
    expect((await store.getRun(runId))?.result).toBe(6);
    expect(counts.produced).toBeGreaterThanOrEqual(5);
  });

  for (const point of ["produced", "committed", "acted"] as const) {
    it(`recovers from a crash at every "${point}"`, async () => {
      let crashes = 0;
      for (let occurrence = 1; occurrence <= counts[point]; occurrence++) {
        invocations.length = 0;
        const runId = await submit();
        let seen = 0;
        let crashed!: () => void;
        const crash = new Promise<void>((resolve) => (crashed = resolve));
        const victim = executor(`victim-${point}-${occurrence}`, (p) => {
          if (p !== point || ++seen !== occurrence) return false;
          crashed();
          return true;
        });
        void victim.activate(runId);
        // Steps vary a little between runs (two results may share an activation): an occurrence
        // this run never reaches is simply not a crash point of this run.
        const didCrash = await Promise.race([
          crash.then(() => true),
          until(() => ended(runId), 15_000, `${runId} to complete`).then(() => false),
        ]);
        if (!didCrash) {
          await victim.close();
          continue;
        }
        crashes++;
        const before = await store.readJournal(runId);
        const completedBefore = new Set(
          before.flatMap((e) => (e.kind === "call.result" ? [e.callSeq] : [])),
        );

        const rescuer = executor(`rescuer-${point}-${occurrence}`);
        const wake = new WakeUp(store, (r) => rescuer.activate(r.runId), { pollMs: 10 });
        await wake.recover();
        wake.start();
        await until(() => ended(runId), 15_000, `${runId} to complete`).catch(
          async (error: Error) => {
            const state = await store.getRun(runId);
            const kinds = (await store.readJournal(runId)).map((e) => e.kind).join(", ");
            throw new Error(
              `crash at ${point} #${occurrence}: ${error.message}; run ${state?.status}: ${kinds}; ` +
                `rescuer hot runs: ${rescuer.hotRuns}; errors: ${reported.slice(-5).join(" | ") || "none"}`,
            );
          },
        );
        wake.stop();
        await rescuer.close();

        const journal = await store.readJournal(runId);
        const where = `crash at ${point} #${occurrence}`;
        expect(shape(journal), where).toEqual(clean);
        expect((await store.getRun(runId))?.result, where).toBe(6);
        for (const entry of journal) {
          if (entry.kind !== "call") continue;
          const mine = invocations.filter((i) => i.callId === entry.callId);
          expect(new Set(mine.map((i) => i.body)).size, `${where}: one body per callId`).toBe(1);
          if (completedBefore.has(entry.seq))
            expect(mine, `${where}: seq ${entry.seq} completed before the crash`).toHaveLength(1);
        }
      }
      expect(crashes).toBeGreaterThanOrEqual(counts[point] - 2);
    });
  }
});
