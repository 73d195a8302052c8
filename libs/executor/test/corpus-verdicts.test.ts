/**
 * The verdict table: every older epoch's corpus replayed on each newer runtime this process is,
 * compared with corpus/verdicts.json (from epoch -> on epoch -> case -> "match" or "diverges at
 * seq N"). It is what `rewind epochs migrate` would find for runs like the corpus's: a change of
 * verdict (a case that used to move and now diverges, or the reverse) fails the build, so that a
 * new V8, ICU or guest runtime changes what can move only on purpose, with the table updated in
 * the same commit. Each runtime's CI leg checks its own column (.ci/runtimes for Node 24 and 26).
 *
 * To record the verdicts of this runtime's column after an intended change:
 *   REWIND_RECORD_VERDICTS=1 npx vitest run libs/executor/test/corpus-verdicts.test.ts
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { parseJournalFile } from "@rewind/journal";
import {
  EPOCHS,
  SUPPORTED_EPOCHS,
  Sandbox,
  currentEnvironment,
  runtimeMismatches,
  type CompiledScript,
} from "@rewind/sandbox";
import { checkReplay } from "../src/index.js";

const CORPUS = fileURLToPath(new URL("../../../corpus/", import.meta.url));
const TABLE = `${CORPUS}verdicts.json`;

type Table = Record<string, Record<string, Record<string, string>>>;
const table = JSON.parse(readFileSync(TABLE, "utf8")) as { verdicts: Table };
const record = process.env.REWIND_RECORD_VERDICTS === "1";

// The runtimes this process is: the supported epochs whose V8 and Intl data are this Node's.
const environment = currentEnvironment();
const here = EPOCHS.filter(
  (e) => SUPPORTED_EPOCHS.includes(e.epoch) && runtimeMismatches(e, environment).length === 0,
).map((e) => e.epoch);
// The recorded corpora: released epochs' folders.
const corpora = EPOCHS.map((e) => e.epoch).filter((epoch) =>
  existsSync(`${CORPUS}epoch-${epoch}/manifest.json`),
);

const sandbox = new Sandbox();
afterAll(() => {
  sandbox.dispose();
  if (record) writeFileSync(TABLE, `${JSON.stringify(table, null, 2)}\n`);
});

it("this runtime serves an epoch", () => {
  expect(here.length).toBeGreaterThan(0);
});

/** An epoch's recorded cases: its corpus folder's and its addenda's (corpus/README.md), by folder. */
function casesOf(epoch: number): { dir: string; name: string }[] {
  return [`${CORPUS}epoch-${epoch}`, `${CORPUS}epoch-${epoch}-addenda`]
    .filter((dir) => existsSync(`${dir}/manifest.json`))
    .flatMap((dir) =>
      (
        JSON.parse(readFileSync(`${dir}/manifest.json`, "utf8")) as { cases: { name: string }[] }
      ).cases.map(({ name }) => ({ dir, name })),
    );
}

for (const to of here)
  for (const from of corpora.filter((epoch) => epoch < to)) {
    describe(`epoch ${from}'s corpus on epoch ${to}'s runtime (Node ${process.versions.node})`, () => {
      for (const { dir, name } of casesOf(from))
        it(`${name}: the verdict is the table's`, async () => {
          const script = JSON.parse(
            readFileSync(`${dir}/${name}.script.json`, "utf8"),
          ) as CompiledScript;
          const journal = parseJournalFile(readFileSync(`${dir}/${name}.jsonl`, "utf8"), name);
          // As `rewind epochs migrate` checks a run: on the target epoch's guest runtime.
          const check = await checkReplay(sandbox, script, journal, to);
          const verdict = check.matches ? "match" : `diverges at seq ${check.divergence.seq}`;
          const column = ((table.verdicts[String(from)] ??= {})[String(to)] ??= {});
          if (record) column[name] = verdict;
          expect(
            column[name],
            column[name] === undefined
              ? `corpus/verdicts.json has no verdict for epoch ${from}'s ${name} on epoch ${to}: record it ` +
                  `(see the top of this file)`
              : `epoch ${from}'s ${name} on epoch ${to} was "${column[name]}" and is now "${verdict}"` +
                  (check.matches ? "" : `: ${check.message}`) +
                  `. If that is intended, record the new verdict in the same commit`,
          ).toBe(verdict);
        });
    });
  }
