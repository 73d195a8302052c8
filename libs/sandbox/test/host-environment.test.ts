/**
 * Nothing of the host's environment reaches a script of a standard epoch: the same probes of
 * every locale- and zone-sensitive API (dates, numbers, collation, plural rules, segmenters,
 * case mapping, list and relative-time formats) run in two child processes with different LANG,
 * LC_ALL and TZ, and compute the same. Epoch 1 leaks LANG (it relies on its launcher's TZ=UTC and
 * keeps its behaviour): its probe differs between the two.
 */
import { describe, expect, it } from "vitest";
import { inChild as inChildProcess, sandboxFile } from "./in-child.js";
import { STANDARD_EPOCH } from "./sandbox-probe.js";

const GERMAN_BERLIN = { LANG: "de_DE.UTF-8", LC_ALL: "de_DE.UTF-8", TZ: "Europe/Berlin" };
const TURKISH_NEW_YORK = { LANG: "en_US.UTF-8", LC_ALL: "tr_TR.UTF-8", TZ: "America/New_York" };

const PROBE = `[
  new Date().toString(), String(new Date(2024, 6, 1)), new Date(2024, 0, 1).getHours(),
  new Date().getTimezoneOffset(), Date.parse("2024-07-01T10:00"), Date.parse("Jul 1 2024 10:00"),
  new Date().toLocaleString(), new Date().toLocaleDateString(), new Date().toLocaleTimeString(),
  new Intl.DateTimeFormat().format(new Date()), Intl.DateTimeFormat().resolvedOptions().timeZone,
  Intl.DateTimeFormat().resolvedOptions().locale, new Intl.DateTimeFormat(undefined, { dateStyle: "full", timeStyle: "full" }).format(new Date()),
  (1234567.891).toLocaleString(), new Intl.NumberFormat().format(1234.5), 10n ** 7n + "" , (10n ** 7n).toLocaleString(),
  new Intl.NumberFormat(undefined, { style: "currency", currency: "EUR" }).format(3.5),
  ["z", "ä", "a", "Z"].sort((a, b) => a.localeCompare(b)), new Intl.Collator().compare("ä", "z"),
  [0, 1, 2, 5].map((n) => new Intl.PluralRules().select(n)), new Intl.PluralRules().resolvedOptions().locale,
  [...new Intl.Segmenter(undefined, { granularity: "word" }).segment("Hello, world. Größe")].map((s) => s.segment),
  new Intl.Segmenter().resolvedOptions().locale,
  "TITLE".toLocaleLowerCase(), "title".toLocaleUpperCase(),
  new Intl.RelativeTimeFormat().format(-1, "day"), new Intl.ListFormat().format(["a", "b", "c"]),
  new Intl.DisplayNames(undefined, { type: "region" }).of("DE"),
]`;

/** Runs the probe in `epoch` in a child process with `env`; answers what it computed. */
function inChild(epoch: number, env: Record<string, string>): unknown {
  return inChildProcess(
    `const { probe } = await import(${sandboxFile("test/sandbox-probe.ts")});
     const { Sandbox } = await import(${sandboxFile("src/host.ts")});
     const sandbox = new Sandbox();
     out.value = await probe(sandbox, ${epoch}, ${JSON.stringify(PROBE)});
     sandbox.dispose();`,
    { env },
  );
}

describe("the host's LANG, LC_* and TZ", () => {
  it(`do not reach a script of epoch ${STANDARD_EPOCH}`, () => {
    const german = inChild(STANDARD_EPOCH, GERMAN_BERLIN) as unknown[];
    const turkish = inChild(STANDARD_EPOCH, TURKISH_NEW_YORK);
    expect(german).toEqual(turkish);
    // And what they compute is en-US at UTC.
    expect(german.slice(0, 4)).toEqual([
      "Wed Jan 01 2025 12:30:00 GMT+0000 (Coordinated Universal Time)",
      "Mon Jul 01 2024 00:00:00 GMT+0000 (Coordinated Universal Time)",
      0,
      0,
    ]);
    expect(german[10]).toBe("UTC");
    expect(german[11]).toBe("en-US");
  });

  it("reach a script of epoch 1 (LANG; its zone is its launcher's TZ=UTC)", () => {
    const german = inChild(1, { ...GERMAN_BERLIN, TZ: "UTC" });
    const turkish = inChild(1, { ...TURKISH_NEW_YORK, TZ: "UTC" });
    expect(german).not.toEqual(turkish);
  });
});
