import { writeFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineToolset } from "@rewind/core";
import { compileScript } from "@rewind/sandbox";
import { usePlatform } from "./platform-harness.js";

const toolset = defineToolset("prices", {
  price: async (args: { step: number }) => ({ cents: args.step * 100 }),
});
const script = (bug: boolean) => `import { tools } from "rewind";
export default async function main() {
  let total = 0;
  for (let step = 1; step <= 5; step++) {
    const priced = await tools.price({ step });
    total += ${bug ? "step === 3 ? (priced as any).missing.cents : priced.cents" : "priced.cents"};
  }
  return total;
}
`;
const mail = defineToolset("mail", {
  charge: async (args: { order: string }) => ({ id: `ch_${args.order}` }),
  sendEmail: { run: async () => ({ sent: true }), unsafeToRepeat: true },
});
const h = usePlatform([toolset, mail]);

it("rewind fork prints the fork's id, the calls reused and the first live call", async () => {
  const api = h.api;
  const { id } = await api.runs.start({
    script: await compileScript({ source: script(true), filename: "p.ts" }),
    toolset: "prices",
  });
  expect(await api.runs.result(id, "20s")).toMatchObject({ status: "failed" });
  const fixed = path.join(h.dir, "fixed.ts");
  writeFileSync(fixed, script(false));
  const preview = await h.rewind("fork", id, "--script", fixed, "--dry-run");
  expect(preview.code).toBe(0);
  expect(preview.stdout).toMatch(
    /would reuse 6 entries of run_\w+\nwould run live from call price\(\{ step: 4 \}\) at seq 8 \(fixed\.ts:5:\d+\)/,
  );
  expect((await api.runs.list()).runs).toHaveLength(1); // a dry run stores nothing
  const { code, stdout, stderr } = await h.rewind("fork", id, "--script", fixed);
  expect(code).toBe(0);
  const forkId = stdout.trim();
  expect(forkId).toMatch(/^run_/);
  expect(stderr).toMatch(/reuse\s+6 entries of run_/);
  expect(stderr).toMatch(
    /run live from\s+call price\(\{ step: 4 \}\) at seq 8 \(fixed\.ts:5:\d+\)/,
  );
  expect(await api.runs.result(forkId, "20s")).toMatchObject({ status: "completed", result: 1500 });

  // runs show marks what the fork reused from its parent and what ran live.
  const shown = await h.rewind("runs", "show", forkId);
  expect(shown.stdout).toMatch(/reused\s+6 entries of its parent/);
  expect(shown.stdout).toMatch(new RegExp(`parent\\s+${id}\n`)); // not "at seq 0"
  expect(shown.stdout).toMatch(/\n7\s+reused\s+call\.result/);
  expect(shown.stdout).toMatch(/\n8\s+live\s+call\s+price\(\{ step: 4 \}\)/);
  const json = JSON.parse((await h.rewind("runs", "show", forkId, "--json")).stdout) as {
    reused: number;
    parent: { runId: string };
  };
  expect(json).toMatchObject({ reused: 6, parent: { runId: id } });
});

it("rewind fork --dry-run names a call to a tool unsafe to repeat that the fork would make again", async () => {
  const receipt = (subject: string) => `import { tools } from "rewind";
export default async function main() {
  const charge = await tools.charge({ order: "A1" });
  await tools.sendEmail({ subject: ${JSON.stringify(subject)} + charge.id });
  return ${subject === "Receipt " ? "(charge as any).missing.id" : "charge.id"};
}
`;
  const { id } = await h.api.runs.start({
    script: await compileScript({ source: receipt("Receipt "), filename: "r.ts" }),
    toolset: "mail",
  });
  expect(await h.api.runs.result(id, "20s")).toMatchObject({ status: "failed" });
  // The fix also rewords the e-mail: the fork sends it again, which the preview must say.
  const fixed = path.join(h.dir, "receipt-fixed.ts");
  writeFileSync(fixed, receipt("Your receipt "));
  const preview = await h.rewind("fork", id, "--script", fixed, "--dry-run");
  expect(preview.code).toBe(0);
  expect(preview.stdout).toMatch(/would run live from call sendEmail\(.*\) at seq 4/);
  expect(preview.stdout).toMatch(
    /unsafe to repeat The fork calls tools\.sendEmail\(\) live at seq 4, and mail\.sendEmail is marked unsafeToRepeat: its parent already called it at seq 4 \(callId run_\w+\/4\), so its effect may happen twice/,
  );
  expect(preview.stdout).not.toMatch(/would fail/);
});

it("rewind replay --script tells a fix safe to fork from a script incompatible with the failed run", async () => {
  const { id } = await h.api.runs.start({
    script: await compileScript({ source: script(true), filename: "p.ts" }),
    toolset: "prices",
  });
  expect(await h.api.runs.result(id, "20s")).toMatchObject({ status: "failed" });
  const fixed = path.join(h.dir, "replay-fixed.ts");
  writeFileSync(fixed, script(false));
  const safe = await h.rewind("replay", id, "--script", fixed);
  expect(safe.stderr).toBe("");
  expect(safe.code).toBe(0);
  expect(safe.stdout).toMatch(
    /replay-fixed\.ts is safe to fork from run_\w+: a fork reuses the 6 entries before its failure \(seq 8\), and where it failed the script now emits call price\(\{ step: 4 \}\)/,
  );
  expect(safe.stdout).toContain(`rewind fork ${id} --script ${fixed}`);

  // Another script: it prices step 1 twice, so it parts from the run before the failure.
  const other = path.join(h.dir, "replay-other.ts");
  writeFileSync(other, script(false).replace("let step = 1", "let step = 0"));
  const incompatible = await h.rewind("replay", id, "--script", other);
  expect(incompatible.code).toBe(1);
  expect(incompatible.stderr).toMatch(
    /replay-other\.ts is incompatible with run_\w+: it diverges at seq 2, before the run's failure/,
  );
  expect(incompatible.stdout).not.toMatch(/safe to fork/);
});

it("rewind fork of a cancelled run says the fork runs on live past the cancel", async () => {
  const waiting = `import { waitForSignal } from "rewind";
export default async function main() {
  await waitForSignal("go");
  return "went";
}
`;
  const { id } = await h.api.runs.start({
    script: await compileScript({ source: waiting, filename: "w.ts" }),
    toolset: "prices",
  });
  await h.api.runs.cancel(id);
  expect(await h.api.runs.result(id, "20s")).toMatchObject({ status: "cancelled" });
  const again = path.join(h.dir, "waiting.ts");
  writeFileSync(again, waiting);
  const preview = await h.rewind("fork", id, "--script", again, "--dry-run");
  expect(preview.code).toBe(0);
  expect(preview.stdout).toMatch(
    new RegExp(
      `note ${id} was cancelled at seq \\d+ \\(cancelled through the API\\): the fork does not inherit the cancel, it would run on live past it`,
    ),
  );
  const forked = await h.rewind("fork", id, "--script", again);
  expect(forked.code).toBe(0);
  expect(forked.stderr).toMatch(/the fork does not inherit the cancel, it runs on live past it/);
  const forkId = forked.stdout.trim();
  await h.api.runs.signal(forkId, "go");
  expect(await h.api.runs.result(forkId, "20s")).toMatchObject({
    status: "completed",
    result: "went",
  });
});
