/**
 * A worker that finds a run's replay diverging quarantines it, before any effect: a
 * run.quarantined entry with the whole report, no tool called again, no timer fired, signals
 * left in the inbox. A worker never touches a run of an epoch it does not run.
 */
import { afterAll, describe, expect, it } from "vitest";
import { defineToolset, type RunQuarantinedEntry } from "@rewind/core";
import { Sandbox, compileScript, epochSupport } from "@rewind/sandbox";
import type { Store } from "@rewind/store";
import { Executor } from "../src/index.js";
import { createRun, until, useTestStore } from "./harness.js";

let store: Store;
useTestStore("quarantine", (made) => (store = made));
const sandbox = new Sandbox({ mode: "async" });
/** The platform bug: Math.random returns something else than when the run was recorded. */
const buggy = new Sandbox({ mode: "async", testOnlyPlatformBug: "Math.random = () => 0.25;" });

afterAll(() => {
  sandbox.dispose();
  buggy.dispose();
});

const calls: string[] = [];
const toolset = defineToolset("q", {
  note: async (args: { r: number }, ctx) => {
    calls.push(ctx.callId);
    return { noted: args.r };
  },
});

const SCRIPT = `import { sleep, tools, waitForSignal } from "rewind";
export default async function main() {
  await tools.note({ r: Math.random() });
  const go = await waitForSignal("go", { timeout: "1s" });
  await sleep(50);
  await tools.note({ r: 1 });
  return go ?? "timed out";
}
`;

async function submit(epoch = 1, source = SCRIPT): Promise<string> {
  const script = await compileScript({ source, filename: "jittery.ts" });
  return createRun(store, script, { toolset: "q", epoch });
}

function executor(owner: string, extra: Partial<ConstructorParameters<typeof Executor>[0]> = {}) {
  return new Executor({ store, sandbox, toolsets: new Map([["q", toolset]]), owner, ...extra });
}

describe("quarantine by the worker that finds a divergence", () => {
  it("holds the run with the whole report, before any effect", async () => {
    const runId = await submit();
    const first = executor("good-worker");
    await first.activate(runId);
    await until(async () => (await store.getRun(runId))?.status === "waiting");
    await first.close();
    expect(calls.filter((id) => id.startsWith(runId))).toHaveLength(1);
    const recorded = await store.readJournal(runId);

    // A signal arrives while a worker with the bug takes over: its cold replay diverges.
    await store.addInbox(runId, { kind: "signal", name: "go", payload: "yes" });
    const second = executor("buggy-worker", { sandbox: buggy, build: "rewind 0.1.0-buggy" });
    await second.activate(runId);
    await second.close();

    const run = await store.getRun(runId);
    expect(run?.status).toBe("quarantined");
    const journal = await store.readJournal(runId);
    expect(journal.slice(0, recorded.length)).toEqual(recorded);
    expect(journal).toHaveLength(recorded.length + 1);
    const entry = journal.at(-1) as RunQuarantinedEntry;
    expect(entry.kind).toBe("run.quarantined");
    expect(entry.report).toMatchObject({
      reason: "divergence",
      runId,
      seq: 2,
      matched: 1,
      recorded: { kind: "call", callsite: "jittery.ts:3:15" },
      replayed: { kind: "call", label: "call note({ r: 0.25 })", callsite: "jittery.ts:3:15" },
      runEpoch: 1,
      workerEpochs: epochSupport().epochs, // every epoch this runtime serves (1 and 2 on Node 20)
      worker: { owner: "buggy-worker", build: "rewind 0.1.0-buggy", isolatedVm: "5.0.4" },
    });
    expect((entry.report as { message: string }).message).toMatch(
      /diverges from its journal at seq 2/,
    );
    // Nothing happened because of it: no call again, the signal still waits, no timer is due.
    expect(calls.filter((id) => id.startsWith(runId))).toHaveLength(1);
    expect((await store.pendingInbox(runId)).map((item) => item.name)).toEqual(["go"]);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // past the signal's 1s timeout
    expect((await store.dueTimers(Date.now(), 10_000)).map((t) => t.runId)).not.toContain(runId);
    expect(await store.runsWithPendingInbox(10_000)).not.toContain(runId);
    expect((await store.openRuns(10_000)).map((r) => r.id)).not.toContain(runId);

    // A fixed worker is not enough: the run stays quarantined until an operator releases it.
    const fixed = executor("fixed-worker");
    await fixed.activate(runId);
    await fixed.close();
    expect(await store.readJournal(runId)).toHaveLength(journal.length);
  });

  it("never touches a run of an epoch it does not run", async () => {
    const runId = await submit(7);
    const other = executor("epoch-1-worker", { epochs: [1] });
    await other.activate(runId);
    await other.close();
    const run = await store.getRun(runId);
    expect(run).toMatchObject({ status: "queued", lastSeq: 1 });
    expect(calls.filter((id) => id.startsWith(runId))).toEqual([]);
    expect(await store.acquireLease(runId, "epoch-7-worker", 1_000, { epochs: [7] })).toMatchObject(
      { attempts: 1 },
    );
  });

  it("quarantines a journal that cannot be replayed instead of retrying it forever", async () => {
    const runId = await submit(
      1,
      `import { tools } from "rewind";\nexport default async () => tools.note({ r: 1 });\n`,
    );
    const lease = (await store.acquireLease(runId, "forger", 30_000))!;
    const at = Date.now();
    // The call matches; then comes an outcome for a call that was never made.
    await store.commit([
      {
        lease,
        afterSeq: 1,
        entries: [
          { seq: 2, kind: "call", at, name: "note", args: { r: 1 }, callId: `${runId}/2` },
          { seq: 3, kind: "call.result", at, callSeq: 9, result: null },
        ],
        status: "running",
      },
    ]);
    await store.releaseLease(lease);
    const errors: unknown[] = [];
    const worker = executor("w", { onError: (_id, error) => errors.push(error) });
    await worker.activate(runId);
    await worker.close();
    expect(errors).toEqual([]);
    expect((await store.getRun(runId))?.status).toBe("quarantined");
    const entry = (await store.readJournal(runId)).at(-1) as RunQuarantinedEntry;
    expect(entry.report).toMatchObject({ reason: "invalid-journal", runEpoch: 1 });
    expect((entry.report as { message: string }).message).toMatch(/No call at seq 9/);
  });
});
