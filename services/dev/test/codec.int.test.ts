/**
 * The payload codec end to end on the embedded platform (docs/codec.md): a run of a codec
 * namespace, its process restarted with rotated keys, replays from its sealed journal and
 * completes; forks and replay checks read it; nothing of its values is in the database or the
 * blob folder; a process without the old key says which key it needs.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { defineToolset } from "@rewind/core";
import { compileScript, type CompiledScript } from "@rewind/sandbox";
import { Rewind } from "@rewind/sdk";
import { openSqlClient } from "@rewind/store";
import { startDevPlatform, type DevPlatform } from "../src/index.js";

const SECRET = "4111-1111-1111-1111";
const K1 = `k1:${randomBytes(32).toString("base64")}`;
const K2 = `k2:${randomBytes(32).toString("base64")}`;
const charged: string[] = [];
const toolset = defineToolset("cards", {
  charge: async (args: { card: string }) => {
    charged.push(args.card);
    return { receipt: `receipt of ${args.card}` };
  },
});
const source = `import { tools, waitForSignal } from "rewind";
export default async function main(input: { card: string; pad: string }) {
  const first = await tools.charge({ card: input.card });
  console.log("charged", input.card, input.pad.length);
  const ok = await waitForSignal<{ note: string }>("approve");
  const second = await tools.charge({ card: input.card + "/2" });
  return { first: first.receipt, second: second.receipt, note: ok.note };
}`;

let dir: string;
let script: CompiledScript;
let platform: DevPlatform | undefined;
const start = async (codecKeys: string) => {
  platform = await startDevPlatform({ port: 0, dataDir: dir, toolsets: [toolset], codecKeys });
  return new Rewind({ url: platform.url, token: platform.token });
};
const stop = async () => {
  await platform?.close();
  platform = undefined;
};
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "rewind-codec-"));
  script = await compileScript({ source, filename: "cards.ts" });
});
afterAll(async () => {
  await stop();
  rmSync(dir, { recursive: true, force: true });
});

it("replays a sealed run after a restart with rotated keys, and keeps its values sealed at rest", async () => {
  let api = await start(K1);
  expect(await api.codec.set({ enabled: true })).toMatchObject({
    enabled: true,
    encryptingKeyId: "k1",
  });
  // The input is large enough for the blob folder (a value stored apart).
  const input = { card: SECRET, pad: "p".repeat(100_000) };
  const { id } = await api.runs.start({ script, toolset: "cards", input });
  const waiting = async () => (await api.runs.get(id)).status === "waiting";
  for (let i = 0; i < 400 && !(await waiting()); i++) await new Promise((r) => setTimeout(r, 50));
  expect((await api.runs.get(id)).status).toBe("waiting");
  // A caller of the namespace sees the values as they were.
  const before = (await api.runs.journal(id)).entries;
  expect(before[0]).toMatchObject({ kind: "run.started", input });
  expect(before.find((e) => e.kind === "output")).toMatchObject({
    text: `charged ${SECRET} 100000\n`,
  });
  await stop();

  // A new process, the keys rotated: k2 seals, k1 still opens.
  api = await start(`${K2},${K1}`);
  await api.runs.signal(id, "approve", { note: `ok for ${SECRET}` });
  expect(await api.runs.result(id, "30s")).toMatchObject({
    status: "completed",
    result: {
      first: `receipt of ${SECRET}`,
      second: `receipt of ${SECRET}/2`,
      note: `ok for ${SECRET}`,
    },
  });
  // Cold replay answered the first call from the sealed journal: it ran once.
  expect(charged).toEqual([SECRET, `${SECRET}/2`]);
  expect(await api.runs.replay(id)).toMatchObject({ matches: true });
  const fork = await api.runs.fork(id, { script });
  expect(await api.runs.result(fork.id, "30s")).toMatchObject({ status: "completed" });
  await stop();

  // At rest: not one value in the clear, in the database or the blob folder.
  const sql = await openSqlClient({ dataDir: dir });
  try {
    const rows = await sql.query<{ text: string }>(
      `SELECT body::text AS text FROM rw_journal
       UNION ALL SELECT coalesce(result_json, '') FROM rw_runs
       UNION ALL SELECT coalesce(body, '') FROM rw_values`,
    );
    const stored = rows.map((r) => r.text).join("\n");
    expect(stored).toContain("rwc2:k1:");
    expect(stored).toContain("rwc2:k2:");
    expect(stored).not.toContain(SECRET);
  } finally {
    await sql.close();
  }
  const blobs = filesUnder(path.join(dir, "blobs"));
  expect(blobs.length).toBeGreaterThan(0);
  for (const file of blobs) expect(readFileSync(file, "utf8")).not.toContain(SECRET);

  // k1 dropped too early: the answer names the key to put back.
  api = await start(K2);
  await expect(api.runs.journal(id)).rejects.toThrow(/key "k1".*REWIND_CODEC_KEYS/);
}, 120_000);

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true })
    .map((name) => path.join(folder, String(name)))
    .filter((file) => statSync(file).isFile());
}
