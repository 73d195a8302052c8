/**
 * The JSON paths a capture policy names (docs/capture-policy.md): a small, closed subset of
 * JSONPath, enough to point at a field of a tool's arguments or result and nothing that costs
 * more than one walk of the value.
 *
 *     $.card.number     $.headers.authorization     $.items[*].cvv     $..password     $['x-api-key']
 *
 * `.name` or `['name']` a key, `[n]` an index, `[*]` or `.*` every member, `..name` that key at
 * any depth. No filters, no slices, no scripts.
 */
export type PathStep =
  | { kind: "key"; key: string }
  | { kind: "index"; index: number }
  | { kind: "any" }
  | { kind: "deep"; key: string };

/** Longest path accepted: a policy is configuration, not data. */
export const MAX_PATH_LENGTH = 256;

/** The steps of `path`, or the reason it is not a path this subset accepts. */
export function parseJsonPath(path: string): { steps: PathStep[] } | { error: string } {
  if (path.length > MAX_PATH_LENGTH)
    return { error: `is longer than ${MAX_PATH_LENGTH} characters` };
  if (!path.startsWith("$")) return { error: `must start with "$" (e.g. "$.card.number")` };
  const steps: PathStep[] = [];
  let i = 1;
  const name = /^[A-Za-z_$][A-Za-z0-9_$-]*/;
  while (i < path.length) {
    const rest = path.slice(i);
    if (rest.startsWith("..")) {
      const key = name.exec(rest.slice(2))?.[0];
      if (key === undefined)
        return { error: `"..": a key must follow at character ${i + 2} (e.g. "$..password")` };
      steps.push({ kind: "deep", key });
      i += 2 + key.length;
    } else if (rest.startsWith(".*")) {
      steps.push({ kind: "any" });
      i += 2;
    } else if (rest.startsWith(".")) {
      const key = name.exec(rest.slice(1))?.[0];
      if (key === undefined)
        return {
          error: `a key must follow "." at character ${i + 1} (use ['key'] for other characters)`,
        };
      steps.push({ kind: "key", key });
      i += 1 + key.length;
    } else if (rest.startsWith("[*]")) {
      steps.push({ kind: "any" });
      i += 3;
    } else if (/^\[\d{1,9}\]/.test(rest)) {
      const digits = /^\[(\d+)\]/.exec(rest)![1]!;
      steps.push({ kind: "index", index: Number(digits) });
      i += digits.length + 2;
    } else if (/^\[(['"])/.test(rest)) {
      const quote = rest[1]!;
      const end = rest.indexOf(`${quote}]`, 2);
      if (end < 0)
        return { error: `the quoted key at character ${i} is not closed with ${quote}]` };
      const key = rest.slice(2, end);
      if (key.includes(quote)) return { error: `a quoted key cannot hold its own quote` };
      steps.push({ kind: "key", key });
      i += end + 2;
    } else {
      return {
        error: `unexpected "${rest[0]}" at character ${i}: say .key, ['key'], [n], [*] or ..key`,
      };
    }
  }
  if (steps.length === 0) return { error: `names the whole value: point at a field ("$.token")` };
  return { steps };
}
