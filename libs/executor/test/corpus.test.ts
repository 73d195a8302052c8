/**
 * The corpus: journals recorded when each epoch was released (corpus/epoch-N/, never edited),
 * replayed by this build for every released epoch it supports, on the runtime that serves it (a
 * draft has no corpus yet; another runtime's epochs are its own CI leg's). Each must match exactly: the script
 * recomputes every command, nothing new is emitted, and the journal comes back byte for byte,
 * both as `rewind exec --resume` replays (sync sandbox) and as a worker does (async sandbox,
 * fast replay slices).
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { parseJournalFile, RunEngine, toJournalFile } from "@rewind/journal";
import {
  SUPPORTED_EPOCHS,
  Sandbox,
  epochSupport,
  findEpoch,
  isDraft,
  type CompiledScript,
} from "@rewind/sandbox";
import { checkReplay, runInProcess } from "../src/index.js";

const CORPUS = fileURLToPath(new URL("../../../corpus/", import.meta.url));

const sync = new Sandbox();
const async = new Sandbox({ mode: "async" });
afterAll(() => {
  sync.dispose();
  async.dispose();
});

function load(dir: string, name: string) {
  const text = readFileSync(`${dir}/${name}.jsonl`, "utf8");
  const script = JSON.parse(readFileSync(`${dir}/${name}.script.json`, "utf8")) as CompiledScript;
  return { text, journal: parseJournalFile(text, `${name}.jsonl`), script };
}

const served = epochSupport().epochs;
const released = SUPPORTED_EPOCHS.filter((epoch) => !isDraft(findEpoch(epoch)!));

it("this runtime serves at least one epoch whose corpus it replays, or a draft", () => {
  expect(served.length).toBeGreaterThan(0);
});

for (const epoch of released.filter((e) => served.includes(e))) {
  const dir = `${CORPUS}epoch-${epoch}`;
  describe(`corpus of epoch ${epoch}`, () => {
    it("exists: every supported epoch has a recorded corpus", () => {
      expect(
        existsSync(`${dir}/manifest.json`),
        `${dir} is missing: record it once with corpus/generate.ts when the epoch is released`,
      ).toBe(true);
    });
    if (!existsSync(`${dir}/manifest.json`)) return;
    const manifest = JSON.parse(readFileSync(`${dir}/manifest.json`, "utf8")) as {
      epoch: number;
      cases: { name: string; status: string; entries: number }[];
    };

    it("covers every determinism feature", () => {
      expect(manifest.epoch).toBe(epoch);
      expect(manifest.cases.map((c) => c.name)).toEqual(
        expect.arrayContaining([
          "clock",
          "random",
          "timers",
          "races",
          "signals",
          "output",
          "errors",
          "large-values",
          "fetch",
        ]),
      );
    });

    for (const c of manifest.cases) replaysExactly(dir, epoch, c);
  });

  // Cases recorded after the release, on the epoch's runtime (corpus/README.md, "Addenda").
  const addenda = `${CORPUS}epoch-${epoch}-addenda`;
  if (existsSync(`${addenda}/manifest.json`))
    describe(`corpus addenda of epoch ${epoch}`, () => {
      const { cases } = JSON.parse(readFileSync(`${addenda}/manifest.json`, "utf8")) as {
        cases: { name: string; status: string; entries: number }[];
      };
      for (const c of cases) replaysExactly(addenda, epoch, c);
    });
}

/** The two replays every corpus case must survive, byte for byte. */
function replaysExactly(
  dir: string,
  epoch: number,
  c: { name: string; status: string; entries: number },
) {
  it(`${c.name}: replays exactly (as rewind exec --resume does)`, async () => {
    const { text, journal, script } = load(dir, c.name);
    const hash = `sha256:${createHash("sha256").update(script.code).digest("hex")}`;
    expect(script.hash).toBe(hash);
    expect(journal[0]).toMatchObject({ kind: "run.started", scriptHash: hash, epoch });
    expect(journal).toHaveLength(c.entries);
    const result = await runInProcess({ script, sandbox: sync, resume: journal });
    expect(result.divergence, result.divergence && JSON.stringify(result.divergence)).toBe(
      undefined,
    );
    expect(result.status).toBe(c.status);
    expect(toJournalFile(result.journal)).toBe(text);
  });

  it(`${c.name}: replays exactly (as a worker does, in async fast-replay slices)`, async () => {
    const { text, journal, script } = load(dir, c.name);
    const started = journal[0]!;
    if (started.kind !== "run.started") throw new Error("no run.started");
    const instance = await async.instantiate(script, {
      seed: started.seed,
      startAt: started.at,
      epoch: started.epoch,
      fastReplay: true,
    });
    try {
      const { engine, entries } = await RunEngine.resume(instance, journal, {
        maxValueBytes: async.options.maxValueBytes,
      });
      expect(entries).toEqual([]); // nothing beyond the journal: the recorded run emitted it all
      expect(toJournalFile(engine.journal)).toBe(text);
    } finally {
      instance.dispose();
    }
  });
}

describe("a doctored journal", () => {
  const fixture = fileURLToPath(new URL("fixtures/doctored-random.jsonl", import.meta.url));

  it("is the corpus's journal with one argument changed", () => {
    const original = readFileSync(`${CORPUS}epoch-1/random.jsonl`, "utf8").split("\n");
    const doctored = readFileSync(fixture, "utf8").split("\n");
    const changed = original.flatMap((line, i) => (line === doctored[i] ? [] : [i + 1]));
    expect(changed).toEqual([4]);
  });

  it("is detected: the report names the seq and both callsites", async () => {
    const { script } = load(`${CORPUS}epoch-1`, "random");
    const journal = parseJournalFile(readFileSync(fixture, "utf8"));
    const check = await checkReplay(sync, script, journal);
    expect(check.matches).toBe(false);
    if (check.matches) return;
    expect(check.divergence).toMatchObject({
      seq: 4,
      matched: 3,
      recorded: { kind: "call", callsite: "random.ts:13:15" },
      replayed: { kind: "call", callsite: "random.ts:13:15" },
    });
    expect(check.divergence.recorded.label).toContain("after: 999999");
    expect(check.divergence.replayed!.label).toContain("after: 212083");
    expect(check.message).toMatch(/diverges from its journal at seq 4/);
  });

  it("and so is a platform bug: a sandbox whose Math.random differs fails the corpus", async () => {
    const { journal, script } = load(`${CORPUS}epoch-1`, "random");
    const buggy = new Sandbox({ testOnlyPlatformBug: "Math.random = () => 0.5;" });
    try {
      const check = await checkReplay(buggy, script, journal);
      expect(check.matches).toBe(false);
      if (!check.matches) expect(check.divergence.seq).toBe(2);
    } finally {
      buggy.dispose();
    }
  });
});
