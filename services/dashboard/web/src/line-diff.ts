/**
 * A line diff of two texts (the script as a run ran it and a corrected one; two values' JSON):
 * the longest common subsequence of lines, then hunks with a few lines of context. Scripts are
 * small; past MAX_CELLS the middle is compared as one block (changed), never hanging the page.
 */
export type DiffLine =
  | { op: "same"; text: string; left: number; right: number }
  | { op: "removed"; text: string; left: number }
  | { op: "added"; text: string; right: number };

/** The most cells of the LCS table: 4 million (a 2,000 × 2,000-line pair). */
const MAX_CELLS = 4_000_000;

export function diffLines(before: string, after: string): DiffLine[] {
  const a = before.split("\n");
  const b = after.split("\n");
  // Common head and tail are cheap and usually most of a fix.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail++;
  const out: DiffLine[] = [];
  for (let i = 0; i < head; i++) out.push({ op: "same", text: a[i]!, left: i + 1, right: i + 1 });
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  out.push(...middle(midA, midB, head));
  for (let k = tail; k > 0; k--) {
    const i = a.length - k;
    const j = b.length - k;
    out.push({ op: "same", text: a[i]!, left: i + 1, right: j + 1 });
  }
  return out;
}

function middle(a: string[], b: string[], offset: number): DiffLine[] {
  const n = a.length;
  const m = b.length;
  if (n * m > MAX_CELLS)
    return [
      ...a.map((text, i): DiffLine => ({ op: "removed", text, left: offset + i + 1 })),
      ...b.map((text, j): DiffLine => ({ op: "added", text, right: offset + j + 1 })),
    ];
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..], in one flat array.
  const lcs = new Uint32Array((n + 1) * (m + 1));
  const at = (i: number, j: number) => i * (m + 1) + j;
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[at(i, j)] =
        a[i] === b[j]
          ? lcs[at(i + 1, j + 1)]! + 1
          : Math.max(lcs[at(i + 1, j)]!, lcs[at(i, j + 1)]!);
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      out.push({ op: "same", text: a[i]!, left: offset + i + 1, right: offset + j + 1 });
      i++;
      j++;
    } else if (i < n && (j === m || lcs[at(i + 1, j)]! >= lcs[at(i, j + 1)]!)) {
      // On a tie, what was removed comes before what replaced it, as diffs are read.
      out.push({ op: "removed", text: a[i]!, left: offset + i + 1 });
      i++;
    } else {
      out.push({ op: "added", text: b[j]!, right: offset + j + 1 });
      j++;
    }
  }
  return out;
}

/** The changed lines with `context` unchanged lines around each change; gaps as null. */
export function hunks(lines: DiffLine[], context = 3): (DiffLine | null)[] {
  const keep = new Uint8Array(lines.length);
  lines.forEach((line, index) => {
    if (line.op === "same") return;
    for (
      let k = Math.max(0, index - context);
      k <= Math.min(lines.length - 1, index + context);
      k++
    )
      keep[k] = 1;
  });
  const out: (DiffLine | null)[] = [];
  lines.forEach((line, index) => {
    if (keep[index]) out.push(line);
    else if (out.length > 0 && out[out.length - 1] !== null) out.push(null);
  });
  if (out[out.length - 1] === null) out.pop();
  return out;
}

export function changed(lines: DiffLine[]): boolean {
  return lines.some((line) => line.op !== "same");
}
