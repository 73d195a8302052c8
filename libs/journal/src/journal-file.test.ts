import { describe, expect, it } from "vitest";
import { parseJournalFile, toJournalFile } from "./journal-file.js";

const started = {
  seq: 1,
  kind: "run.started",
  at: 0,
  runId: "r",
  scriptHash: "sha256:x",
  input: null,
  seed: "00",
  epoch: 1,
  toolset: "t",
  namespace: "default",
};

describe("journal files", () => {
  it("round-trips entries as JSON Lines", () => {
    const entries = [
      started,
      { seq: 2, kind: "output", at: 0, stream: "stdout", text: "hi\n" },
    ] as const;
    const text = toJournalFile(entries as never);
    expect(text.split("\n")).toHaveLength(3);
    expect(parseJournalFile(text)).toEqual(entries);
  });

  it("names the line and the problem", () => {
    const line = (o: object) => JSON.stringify(o);
    expect(() => parseJournalFile("nope")).toThrow(/line 1 is not JSON/);
    expect(() =>
      parseJournalFile(`${line(started)}\n${line({ seq: 3, kind: "output", at: 0 })}`),
    ).toThrow(/line 2 has seq 3 where 2 was expected/);
    expect(() =>
      parseJournalFile(`${line(started)}\n${line({ seq: 2, kind: "teleport", at: 0 })}`),
    ).toThrow(/unknown kind "teleport"/);
    expect(() =>
      parseJournalFile(`${line(started)}\n${line({ seq: 2, kind: "call", at: 0, name: "x" })}`),
    ).toThrow(/lacks the field "args"/);
    expect(() =>
      parseJournalFile(line({ ...started, kind: "output", stream: "stdout", text: "" })),
    ).toThrow(/must be the run.started entry/);
    expect(() => parseJournalFile("\n\n")).toThrow(/holds no entries/);
  });
});
