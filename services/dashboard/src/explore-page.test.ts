import { createHash } from "node:crypto";
import type { JournalEntry } from "@rewind/core";
import { describe, expect, it } from "vitest";
import { exploreData, runViewOfJournal } from "./explore-data.js";
import { exploreHtml } from "./explore-page.js";

const HOSTILE = "</script><script>alert(1)</script><!-- <img src=x onerror=alert(2)>";
const entries: JournalEntry[] = [
  {
    seq: 1,
    kind: "run.started",
    at: 1_000,
    runId: "run_x",
    scriptHash: "sha256:abc",
    input: { evil: HOSTILE },
    seed: "0".repeat(64),
    epoch: 2,
    toolset: "shop",
    namespace: "default",
  },
  {
    seq: 2,
    kind: "call",
    at: 1_000,
    callsite: "x.ts:3:9",
    name: "lookup",
    args: { q: "x".repeat(5_000) },
    callId: "run_x/2",
  },
  { seq: 3, kind: "call.result", at: 1_500, callSeq: 2, result: { ok: HOSTILE } },
  { seq: 4, kind: "run.completed", at: 1_600, callsite: "x.ts:4:3", result: "y".repeat(3_000) },
];

describe("exploreData", () => {
  it("leaves out each value past the limit, names it by seq and field, and keeps the others", () => {
    const data = exploreData({
      from: "run_x",
      run: runViewOfJournal(entries, "x.ts"),
      entries,
      valueLimit: 4_000,
    });
    expect(data.omitted).toEqual({ "2.args": 5_008 });
    expect(data.entries[1]).toMatchObject({ args: "(left out of this file: 5008 characters)" });
    expect(data.entries[2]).toEqual(entries[2]);
    expect(data.run.result).toBe("y".repeat(3_000));
    expect(
      exploreData({ from: "f", run: runViewOfJournal(entries), entries, valueLimit: 2_000 })
        .omitted,
    ).toEqual({
      "2.args": 5_008,
      "4.result": 3_002,
      "run.result": 3_002,
    });
  });

  it("makes a run's view from a journal alone: its status from the entry that ended it", () => {
    const run = runViewOfJournal(entries, "x.ts");
    expect(run).toMatchObject({
      id: "run_x",
      status: "completed",
      script: "x.ts",
      lastSeq: 4,
      epoch: 2,
    });
    expect(run.endedAt).toBe(new Date(1_600).toISOString());
    expect(runViewOfJournal(entries.slice(0, 3)).status).toBe("waiting");
    expect(() => runViewOfJournal(entries.slice(1))).toThrow(/opens with its run.started entry/);
  });
});

describe("exploreHtml", () => {
  const html = exploreHtml(
    exploreData({ from: "run_x", run: runViewOfJournal(entries, "x.ts"), entries }),
  );

  it("embeds the data so that no tenant text can end its element or be parsed as markup", () => {
    const data = /<script type="application\/json" id="rewind-data">(.*?)<\/script>/s.exec(
      html,
    )![1]!;
    expect(data).not.toContain("<");
    expect(JSON.parse(data).entries[2].result.ok).toBe(HOSTILE);
    expect(html.match(/<script/g)).toHaveLength(2);
  });

  it("allows only its own script and style by their SHA-256, and connects nowhere", () => {
    const policy = /http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(html)![1]!;
    const script = /<script type="module">(.*?)<\/script>/s.exec(html)![1]!;
    const style = /<style>(.*?)<\/style>/s.exec(html)![1]!;
    const hash = (text: string) => createHash("sha256").update(text).digest("base64");
    expect(policy.split("; ")).toEqual([
      "default-src 'none'",
      `script-src 'sha256-${hash(script)}'`,
      `style-src 'sha256-${hash(style)}'`,
      "img-src 'none'",
      "connect-src 'none'",
      "base-uri 'none'",
      "form-action 'none'",
    ]);
    expect(script).not.toMatch(/sourceMappingURL|<\/script/i);
  });
});
