import type { Json, JournalEntry } from "@rewind/core";
import { parseJsonPath, type CaptureDetector, type PathStep } from "@rewind/contract";
import type { CaptureRules } from "@rewind/store";
import { BoundedPatterns } from "./bounded-patterns.js";
import { detect } from "./detectors.js";

/**
 * A capture policy compiled (docs/capture-policy.md): what replaces the secrets of a run's
 * entries by markers before they are committed. A field named by a JSON path is replaced whole
 * by `{"$redacted": "<path>"}`; a match of a detector or pattern inside a string (console output
 * and error messages too) by `[redacted:<rule>]`. An entry something was redacted from says so:
 * `redacted: [<rule>…]`, the rules that hit, which is what tells the journal's strictly
 * replayable entries from the others.
 */
export class Redactor {
  private readonly paths: { path: string; steps: PathStep[] }[];
  private readonly detectors: CaptureDetector[];
  private readonly patterns: BoundedPatterns | undefined;

  private constructor(rules: readonly CaptureRules[]) {
    const paths = new Map<string, PathStep[]>();
    const detectors = new Set<CaptureDetector>();
    const patterns = new Map<string, CaptureRules["patterns"][number]>();
    for (const rule of rules) {
      for (const path of rule.fields) {
        const parsed = parseJsonPath(path);
        if ("steps" in parsed) paths.set(path, parsed.steps); // validated at the door
      }
      for (const name of rule.detectors) detectors.add(name as CaptureDetector);
      for (const pattern of rule.patterns) patterns.set(pattern.name, pattern);
    }
    this.paths = [...paths].map(([path, steps]) => ({ path, steps }));
    this.detectors = [...detectors];
    this.patterns = patterns.size === 0 ? undefined : new BoundedPatterns([...patterns.values()]);
  }

  /** The redactor of these rules, or undefined when they redact nothing. */
  static of(rules: readonly CaptureRules[]): Redactor | undefined {
    const any = rules.some((r) => r.fields.length + r.detectors.length + r.patterns.length > 0);
    return any ? new Redactor(rules) : undefined;
  }

  /** A value with its secrets replaced, and the rules that hit (none: the value itself). */
  value(value: Json): { value: Json; rules: string[] } {
    const [entry] = this.entries([{ seq: 0, kind: "signal", at: 0, name: "", payload: value }]);
    const rules = (entry as { redacted?: string[] }).redacted ?? [];
    return { value: (entry as { payload: Json }).payload, rules };
  }

  /**
   * Entries as they are to be committed: each that held a secret copied with it replaced and
   * marked `redacted`; the others are returned as they are. The patterns of the whole batch run
   * in one bounded call.
   */
  entries(entries: readonly JournalEntry[]): JournalEntry[] {
    const out: Record<string, unknown>[] = [];
    const hits: Set<string>[] = [];
    const texts: { text: string; set: (text: string) => void; entry: number }[] = [];
    entries.forEach((original, index) => {
      const entry = { ...(original as unknown as Record<string, unknown>) };
      const hit = new Set<string>();
      out.push(entry);
      hits.push(hit);
      const collect = (text: string, set: (text: string) => void) =>
        texts.push({ text, set, entry: index });
      const field = VALUE_FIELD[original.kind];
      if (field !== undefined) {
        entry[field] = this.fields(entry[field] as Json, hit);
        entry[field] = strings(
          entry[field] as Json,
          (s, set) => collect(s, set),
          (v) => (entry[field] = v),
        );
      }
      if (original.kind === "output") collect(entry.text as string, (text) => (entry.text = text));
      if (original.kind === "call.error" || original.kind === "run.failed") {
        const error = { ...(entry.error as Record<string, unknown>) };
        entry.error = error;
        if (typeof error.message === "string")
          collect(error.message, (text) => (error.message = text));
        if (typeof error.stack === "string") collect(error.stack, (text) => (error.stack = text));
      }
    });
    // Detectors first (fixed code, in this thread), then the operator's patterns (bounded).
    for (const slot of texts) {
      const next = detect(slot.text, this.detectors, hits[slot.entry]!);
      if (next !== slot.text) slot.set((slot.text = next));
    }
    if (this.patterns !== undefined && texts.length > 0) {
      const { out: replaced, hits: names } = this.patterns.apply(texts.map((t) => t.text));
      const hitBy = new Set(names);
      texts.forEach((slot, i) => {
        if (replaced[i] === slot.text) return;
        slot.set(replaced[i]!);
        // Which pattern hit which text is not told apart: each changed entry gets those named.
        for (const name of hitBy) hits[slot.entry]!.add(name);
      });
    }
    return out.map((entry, i) =>
      hits[i]!.size === 0
        ? entries[i]!
        : ({ ...entry, redacted: [...hits[i]!].sort() } as unknown as JournalEntry),
    );
  }

  /** A value with every field a path names replaced by the path's marker. */
  private fields(value: Json, hit: Set<string>): Json {
    if (this.paths.length === 0) return value;
    let copy: Json | undefined;
    for (const { path, steps } of this.paths) {
      const marker = { $redacted: path };
      const target = copy ?? value;
      const replaced = replaceAt(target, steps, 0, marker);
      if (replaced !== target) {
        copy = replaced;
        hit.add(path);
      }
    }
    return copy ?? value;
  }
}

/** The entry fields that hold a JSON value, by kind (the store's value fields). */
const VALUE_FIELD: Partial<Record<JournalEntry["kind"], string>> = {
  "run.started": "input",
  call: "args",
  "call.result": "result",
  signal: "payload",
  "run.completed": "result",
};

/** `value` with what `steps` (from `i`) names replaced by `marker`: a copy where it changed. */
function replaceAt(value: Json, steps: readonly PathStep[], i: number, marker: Json): Json {
  // A marker stays as it is: a value redacted at the door (a signal) is not redacted again.
  if (i === steps.length) return isMarker(value) ? value : marker;
  const step = steps[i]!;
  if (value === null || typeof value !== "object") return value;
  switch (step.kind) {
    case "key": {
      if (Array.isArray(value) || !Object.hasOwn(value, step.key)) return value;
      const next = replaceAt(value[step.key]!, steps, i + 1, marker);
      return next === value[step.key] ? value : { ...value, [step.key]: next };
    }
    case "index": {
      if (!Array.isArray(value) || step.index >= value.length) return value;
      const next = replaceAt(value[step.index]!, steps, i + 1, marker);
      if (next === value[step.index]) return value;
      const copy = [...value];
      copy[step.index] = next;
      return copy;
    }
    case "any":
      return mapMembers(value, (member) => replaceAt(member, steps, i + 1, marker));
    case "deep": {
      // The key here (then the rest of the path from it), and at any depth below.
      let here = value;
      if (!Array.isArray(value) && Object.hasOwn(value, step.key)) {
        const next = replaceAt(value[step.key]!, steps, i + 1, marker);
        if (next !== value[step.key]) here = { ...value, [step.key]: next };
      }
      return mapMembers(here, (member, key) =>
        key === step.key && !Array.isArray(here) ? member : replaceAt(member, steps, i, marker),
      );
    }
  }
}

/** Whether a value is a field's marker, `{"$redacted": "<rule>"}`. */
export function isMarker(value: Json): boolean {
  return (
    value !== null &&
    typeof value === "object" &&
    !Array.isArray(value) &&
    typeof value.$redacted === "string" &&
    Object.keys(value).length === 1
  );
}

function mapMembers(value: Json, f: (member: Json, key: string | number) => Json): Json {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    let copy: Json[] | undefined;
    value.forEach((member, i) => {
      const next = f(member, i);
      if (next !== member) (copy ??= [...value])[i] = next;
    });
    return copy ?? value;
  }
  let copy: Record<string, Json> | undefined;
  for (const [key, member] of Object.entries(value)) {
    const next = f(member, key);
    if (next !== member) (copy ??= { ...value })[key] = next;
  }
  return copy ?? value;
}

/**
 * Visits every string of `value` (object keys excepted), handing a setter that writes a new
 * text into a copy; `replace` receives the copied root when the root itself is a string.
 */
function strings(
  value: Json,
  visit: (text: string, set: (text: string) => void) => void,
  replace: (value: Json) => void,
): Json {
  if (typeof value === "string") {
    visit(value, (text) => replace(text));
    return value;
  }
  if (value === null || typeof value !== "object") return value;
  const copy: Record<string, Json> | Json[] = Array.isArray(value) ? [...value] : { ...value };
  for (const key of Object.keys(copy)) {
    const member = (copy as Record<string, Json>)[key]!;
    (copy as Record<string, Json>)[key] = strings(member, visit, (next) => {
      (copy as Record<string, Json>)[key] = next;
    });
  }
  return copy;
}
