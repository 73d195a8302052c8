import { describe, expect, it } from "vitest";
import { changed, diffLines, hunks } from "../web/src/line-diff.js";

describe("line diff", () => {
  it("finds one changed line among equal ones, numbered on each side", () => {
    const lines = diffLines("a\nb\nc\nd", "a\nB\nc\nd");
    expect(lines).toEqual([
      { op: "same", text: "a", left: 1, right: 1 },
      { op: "removed", text: "b", left: 2 },
      { op: "added", text: "B", right: 2 },
      { op: "same", text: "c", left: 3, right: 3 },
      { op: "same", text: "d", left: 4, right: 4 },
    ]);
    expect(changed(lines)).toBe(true);
  });

  it("aligns inserted and deleted lines by their longest common subsequence", () => {
    const lines = diffLines("x\na\nb\nc\ny", "x\nb\nc\nnew\ny");
    expect(lines.map((l) => `${l.op[0]}${l.text}`)).toEqual(["sx", "ra", "sb", "sc", "anew", "sy"]);
  });

  it("keeps context around changes and marks the gaps", () => {
    const before = Array.from({ length: 20 }, (_, i) => `l${i}`).join("\n");
    const after = before.replace("l10", "L10");
    const shown = hunks(diffLines(before, after), 2);
    expect(shown.map((l) => (l === null ? "…" : l.text))).toEqual([
      "l8",
      "l9",
      "l10",
      "L10",
      "l11",
      "l12",
    ]);
    expect(changed(diffLines(before, before))).toBe(false);
    expect(hunks(diffLines(before, before))).toEqual([]);
  });
});
