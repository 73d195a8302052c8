/**
 * rewind quarantine list | show | release | give-up and rewind epochs, against `rewind dev` (whose
 * quarantine service runs in-process). The quarantined runs are made the way a platform fault
 * makes them: a journal the script no longer replays (a call recorded with other arguments).
 */
import { expect, it } from "vitest";
import { newSeed, type RunStartedEntry } from "@rewind/core";
import { defineToolset } from "@rewind/sdk";
import { compileScript, epochSupport, newRunEpoch } from "@rewind/sandbox";
import { usePlatform } from "./platform-harness.js";

const toolset = defineToolset("ledger", {
  post: async (args: { amount: number }) => ({ posted: args.amount }),
});
const SCRIPT = `import { tools, waitForSignal } from "rewind";
export default async function main(input: { amount: number }) {
  await tools.post({ amount: input.amount });
  await waitForSignal("close");
  return "closed";
}
`;

const h = usePlatform([toolset]);

/** A run whose journal recorded tools.post with another amount: its replay diverges at seq 2. */
async function quarantinedRun(): Promise<string> {
  const script = await compileScript({ source: SCRIPT, filename: "ledger.ts" });
  await h.store.putScript("default", script);
  const runId = `run_cli_q_${Math.random().toString(36).slice(2, 10)}`;
  const started: RunStartedEntry = {
    seq: 1,
    kind: "run.started",
    at: Date.now(),
    runId,
    scriptHash: script.hash,
    input: { amount: 10 },
    seed: newSeed(),
    epoch: 1,
    toolset: "ledger",
    namespace: "default",
  };
  await h.store.createRun({ started, ttlMs: 60_000 });
  const lease = (await h.store.acquireLease(runId, "recorder", 30_000))!;
  await h.store.commit([
    {
      lease,
      afterSeq: 1,
      entries: [
        {
          seq: 2,
          kind: "call",
          at: started.at,
          callsite: "ledger.ts:3:15",
          name: "post",
          args: { amount: 99 },
          callId: `${runId}/2`,
        },
        { seq: 3, kind: "call.result", at: started.at, callSeq: 2, result: { posted: 99 } },
      ],
      status: "waiting",
    },
  ]);
  await h.store.releaseLease(lease);
  await h.api.runs.signal(runId, "close"); // rings: the run is loaded cold, replayed, held
  for (let i = 0; i < 200 && (await h.api.runs.get(runId)).status !== "quarantined"; i++)
    await new Promise((resolve) => setTimeout(resolve, 50));
  expect((await h.api.runs.get(runId)).status).toBe("quarantined");
  return runId;
}

it("list and show say where each run left its journal, with both callsites", async () => {
  const id = await quarantinedRun();
  const list = await h.rewind("quarantine", "list");
  expect(list.code).toBe(0);
  expect(list.stdout).toContain(`${id}  quarantined  divergence  epoch 1`);
  expect(list.stdout).toMatch(/diverges at seq 2 \(1 matched before\)/);
  expect(list.stdout).toMatch(/recorded {2}call post\(\{ amount: 99 \}\) {3}at ledger\.ts:3:15/);
  expect(list.stdout).toMatch(/replayed {2}call post\(\{ amount: 10 \}\) {3}at ledger\.ts:3:15/);
  const json = JSON.parse((await h.rewind("quarantine", "list", "--json")).stdout);
  expect(json.find((r: { id: string }) => r.id === id)).toMatchObject({ seq: 4, runEpoch: 1 });

  const show = await h.rewind("quarantine", "show", id);
  expect(show.code).toBe(0);
  // The epochs the finding worker (rewind dev) serves: every one of this runtime's (1, 2 on Node 20).
  const served = epochSupport().epochs.join(",\\s+");
  expect(show.stdout).toMatch(new RegExp(`"workerEpochs": \\[\\s+${served}\\s+\\]`));
  expect(show.stdout).toMatch(/seq 4 +run\.quarantined/);

  const epochs = await h.rewind("epochs");
  expect(epochs.code).toBe(0);
  // The quarantined run is epoch 1's, which rewind dev still serves; new runs start in the
  // newest epoch this runtime serves (2 on Node 20).
  expect(epochs.stdout).toMatch(
    /^1 +supported +V8 [\d.]+, isolated-vm 5\.0\.4 +\d+ live +1 worker .*quarantined/m,
  );
  expect(epochs.stdout).toMatch(new RegExp(`^${newRunEpoch()} +current `, "m"));
});

it("give-up fails the run once, with the reason; release after it is refused", async () => {
  const id = await quarantinedRun();
  const given = await h.rewind("quarantine", "give-up", id, "--reason", "posted twice by hand");
  expect(given.code).toBe(0);
  expect(given.stdout).toMatch(/✓ given up: given up by rewind dev@default at seq 5/);
  expect(await h.api.runs.get(id)).toMatchObject({ status: "failed", error: { code: "GIVEN_UP" } });
  const again = await h.rewind("quarantine", "give-up", id);
  expect(again.stdout).toMatch(/already given up/);
  const release = await h.rewind("quarantine", "release", id);
  expect(release.code).toBe(1);
  expect(release.stderr).toMatch(/is failed, not quarantined.*fork it.*\(CONFLICT\)/);
});

it("release replays the run; a journal that still diverges is held again, by a new quarantine", async () => {
  const id = await quarantinedRun();
  const wrong = await h.rewind("quarantine", "release", id, "--epoch", "9");
  expect(wrong.code).toBe(1);
  expect(wrong.stderr).toMatch(/epoch 9 has not been released \(released epochs: 1, 2, 3, 4\)/);
  const released = await h.rewind("quarantine", "release", id);
  expect(released.code).toBe(0);
  expect(released.stdout).toMatch(
    /✓ released: released by rewind dev@default onto epoch 1 at seq 5/,
  );
  for (let i = 0; i < 200 && (await h.api.runs.get(id)).lastSeq < 6; i++)
    await new Promise((resolve) => setTimeout(resolve, 50));
  const show = await h.rewind("quarantine", "show", id, "--json");
  expect(JSON.parse(show.stdout)).toMatchObject({
    quarantined: true,
    history: [
      { seq: 4, kind: "run.quarantined" },
      { seq: 5, kind: "run.released", by: "rewind dev@default", epoch: 1 },
      { seq: 6, kind: "run.quarantined" },
    ],
  });
});
