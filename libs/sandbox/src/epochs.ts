import { contextsHaveMathE, isolatedVmVersion } from "./engine.js";
import { guestBundle } from "./guest-bundle.js";

/**
 * Determinism epochs. A replay only works if the script computes exactly what it computed the
 * first time; scripts cannot be non-deterministic, but Rewind can change under them: a new V8, a
 * new isolated-vm, new runtime code in the sandbox, a new way of matching the journal. An epoch
 * names all of that together, with one integer recorded in each run (`run.started.epoch`, and the
 * run row, which a release may move). A run is only ever executed by a worker whose build
 * supports its epoch.
 *
 * Releasing an epoch: add a row below (never edit a released row), make it CURRENT_EPOCH, record
 * its corpus once (`corpus/generate.ts`), and keep supporting older epochs for as long as their
 * runs live (a build supports an epoch only while its code digests equal that epoch's).
 */

/** What a worker's process brings that changes what scripts compute. */
export interface EpochEnvironment {
  /** V8's own version, without Node's `-node.N` patch suffix. */
  v8: string;
  isolatedVm: string;
  /** Intl's data: number and date formats, named time zones. */
  icu: string;
  tz: string;
  /** Unicode's version (what `\p{…}`, case mapping and segmenters know): absent in epoch 1's row. */
  unicode?: string;
  /** CLDR's version (locale data: month names, plural rules, collation): absent in epoch 1's row. */
  cldr?: string;
}

/** Options that change how a run replays (each one is also pinned by the digests below). */
export interface ReplayOptions {
  /** The time zone inside the sandbox (epoch 1: the process's, TZ=UTC set by its launcher). */
  timeZone: string;
  /** The locale of Intl and `toLocale*` when a script names none. */
  defaultLocale: string;
  /** Where Math.random and crypto draw from. */
  random: string;
  /** The largest value that crosses the sandbox's wall; larger ones throw or fail the run. */
  maxValueBytes: number;
}

export interface EpochRelease {
  epoch: number;
  /**
   * The day it was released; absent while the epoch is a **draft**: defined so that its runtime
   * runs Rewind (dev, tests, trying it out), but its guest runtime and digests may still change
   * and it has no corpus yet. Runs started in a draft may not replay on the build that releases
   * it. Releasing it sets this day, records its corpus, and freezes the row.
   */
  released?: string;
  environment: EpochEnvironment;
  /** `sha256:` of the guest runtime the isolate evaluates (`guestBundle(epoch).digest`). */
  sandboxDigest: string;
  /**
   * `sha256:` of the host-side matching code: the replay engine (libs/journal/src/engine.ts and
   * what it uses to compare commands: canonical JSON, entry order) and the host's parsing of the
   * guest's commands (libs/sandbox/src/commands.ts), bundled without comments or whitespace.
   * Pinned by libs/executor/test/epochs.test.ts.
   */
  matchingDigest: string;
  replay: ReplayOptions;
  notes: string;
}

/**
 * The replay options of the standard-JavaScript epochs: epoch 1's, with the zone (UTC) pinned inside
 * the guest runtime (not by the process's TZ).
 */
const STANDARD_REPLAY: ReplayOptions = {
  timeZone: "UTC",
  defaultLocale: "en-US",
  random: "ChaCha20 (RFC 8439) keyed by the run's 256-bit seed",
  maxValueBytes: 4 * 1024 * 1024,
};

/** Every epoch ever released (and the drafts), oldest first. Released rows are never edited. */
export const EPOCHS: readonly EpochRelease[] = [
  {
    epoch: 1,
    released: "2026-11-29",
    environment: { v8: "11.3.244.8", isolatedVm: "5.0.4", icu: "78.2", tz: "2025c" },
    // Updated on purpose from sha256:408bf50a…: sleep, setTimeout, setInterval and a signal's
    // timeout throw a RangeError when the wait would end after the last date JavaScript can
    // name (issue 17). Only waits that never worked are refused: such a run failed at its next
    // commit (the timer row could not hold the due time) or could not be shown. Every other
    // script computes and emits exactly what it did (the corpus replays byte for byte).
    sandboxDigest: "sha256:a9ac539ad823f9aad260f094a61c8a02c259609058cde2cae53c7afd5406bfe9",
    // Updated on purpose from sha256:747b7086…: the error table gained GIVEN_UP. The engine reads
    // that table only for RewindError.retryable, never to match or write entries: replays of
    // epoch 1 are unaffected (the corpus replays byte for byte).
    // Then from sha256:8a70737d…: orderEntry remembers each entry shape's key order instead of
    // sorting every entry's keys; the order is the same (libs/core/src/entries.test.ts checks it
    // against the sort it replaced), and the corpus replays byte for byte.
    // Then from sha256:4c46d33e…: the error table gained BAD_REQUEST, METHOD_NOT_ALLOWED,
    // URI_TOO_LONG and HEADERS_TOO_LARGE, answers of the API's door that no journal entry holds;
    // the engine reads the table only for RewindError.retryable (the corpus replays byte for byte).
    // Then from sha256:160c4ba7…: the host holds each command batch to the wire's schema (issue
    // 17, forged commands): exact fields and types, callsites as line:column, values within the
    // size and depth limits the guest itself enforces, nothing after the run's end. Every batch
    // the epoch-1 runtime writes on its own passes unchanged (the corpus replays byte for byte);
    // only batches a script forged by splicing text into them are refused, failing that run.
    // Then from sha256:3b3982d1…: the error table gained LIMIT_EXCEEDED (a namespace's limits,
    // enforced by the executor at its commits, never by the guest); the engine reads the table
    // only for RewindError.retryable (the corpus replays byte for byte).
    matchingDigest: "sha256:b027cb21023269d85d19cf88c0917a11594265b017ff0b6aceffe2d47c1639a1",
    replay: {
      timeZone: "UTC",
      defaultLocale: "en-US",
      random: "ChaCha20 (RFC 8439) keyed by the run's 256-bit seed",
      maxValueBytes: 4 * 1024 * 1024,
    },
    notes: "Node 20.20 with isolated-vm 5.0.4: the first release.",
  },
  // One epoch per runtime, released together on 2026-12-01 with the standard guest runtime
  // (guest/standard/, guestBundle(epoch)), which fixes the sandbox's deviations from standard
  // JavaScript (issue 12) and carries the hardening changes scripts observe (issue 17: the wire,
  // WebAssembly's caps, long timers), so that each runtime got one new epoch, not two.
  // Released with epoch 1's behaviour for unhandled rejections, a known limit (libs/sandbox/
  // HOW_IT_WORKS.md, "Unhandled rejections: a known limit"): the rule of issue 12 needs an
  // isolated-vm that holds rejected promises strongly, which no release does yet.
  {
    epoch: 2,
    released: "2026-12-01",
    environment: {
      v8: "11.3.244.8",
      isolatedVm: "5.0.4",
      icu: "78.2",
      tz: "2025c",
      unicode: "17.0",
      cldr: "48.0",
    },
    sandboxDigest: "sha256:0a7209c082a1f2f03b58980019110c17cb12bc454e0a5274084018b3bc50d6b7",
    matchingDigest: "sha256:b027cb21023269d85d19cf88c0917a11594265b017ff0b6aceffe2d47c1639a1",
    replay: STANDARD_REPLAY,
    notes:
      "Node 20.20 (end of life) with isolated-vm 5.0.4: the standard guest runtime, for the new runs " +
      "of deployments still on Node 20; epoch 1 stays theirs for the runs it has. " +
      "Unhandled rejections as in epoch 1 (a known limit: one the collector took before the " +
      "activation ended is forgotten); a runtime whose isolated-vm holds them strongly gets the rule " +
      "as its next epoch.",
  },
  {
    epoch: 3,
    released: "2026-12-01",
    environment: {
      v8: "13.6.233.17",
      isolatedVm: "7.0.1",
      icu: "78.3",
      tz: "2026e",
      unicode: "17.0",
      cldr: "48.0",
    },
    sandboxDigest: "sha256:0a7209c082a1f2f03b58980019110c17cb12bc454e0a5274084018b3bc50d6b7",
    matchingDigest: "sha256:b027cb21023269d85d19cf88c0917a11594265b017ff0b6aceffe2d47c1639a1",
    replay: STANDARD_REPLAY,
    notes:
      "Node 24.22 (LTS) with isolated-vm 7.0.1, prebuilt: the standard guest runtime. " +
      "Unhandled rejections as in epoch 1 (a known limit: one the collector took before the " +
      "activation ended is forgotten); a runtime whose isolated-vm holds them strongly gets the rule " +
      "as its next epoch.",
  },
  {
    epoch: 4,
    released: "2026-12-01",
    environment: {
      v8: "14.6.202.34",
      isolatedVm: "7.0.1",
      icu: "78.3",
      tz: "2026e",
      unicode: "17.0",
      cldr: "48.0",
    },
    sandboxDigest: "sha256:0a7209c082a1f2f03b58980019110c17cb12bc454e0a5274084018b3bc50d6b7",
    matchingDigest: "sha256:b027cb21023269d85d19cf88c0917a11594265b017ff0b6aceffe2d47c1639a1",
    replay: STANDARD_REPLAY,
    notes:
      "Node 26.12 (current LTS) with isolated-vm 7.0.1, prebuilt: the standard guest runtime. " +
      "Unhandled rejections as in epoch 1 (a known limit: one the collector took before the " +
      "activation ended is forgotten); a runtime whose isolated-vm holds them strongly gets the rule " +
      "as its next epoch.",
  },
];

/**
 * The epochs this build can replay, on one runtime or another: its runtime and matching code are
 * theirs, digest for digest. Which of them a process serves depends on its Node (epochSupport).
 */
export const SUPPORTED_EPOCHS: readonly number[] = [1, 2, 3, 4];

/**
 * The newest released epoch. New runs start in `newRunEpoch()`: the newest epoch the process's
 * own runtime serves (Node 20: 2, Node 24: 3, Node 26: 4), which is this one only on its runtime.
 */
export const CURRENT_EPOCH = 4;

/** The runtime an epoch names, as its notes begin: "Node 24.22 (LTS) with isolated-vm 7.0.1, prebuilt". */
export function runtimeOf(release: EpochRelease): string {
  const notes = release.notes.replace(/^Draft\. /, "");
  return /^(.*?)[:.](\s|$)/.exec(notes)?.[1] ?? notes;
}

/** True for a draft: defined, runnable on its runtime, not released (see EpochRelease.released). */
export function isDraft(release: EpochRelease): boolean {
  return release.released === undefined;
}

export function findEpoch(epoch: number): EpochRelease | undefined {
  return EPOCHS.find((release) => release.epoch === epoch);
}

/** The process's own V8, isolated-vm and Intl data. */
export function currentEnvironment(): EpochEnvironment {
  return {
    v8: process.versions.v8.replace(/-node\.\d+$/, ""),
    isolatedVm: isolatedVmVersion(),
    icu: process.versions.icu ?? "none",
    tz: process.versions.tz ?? "none",
    unicode: process.versions.unicode ?? "none",
    cldr: process.versions.cldr ?? "none",
  };
}

/** What of an epoch's runtime identity an environment lacks: empty when it can replay the epoch. */
export function runtimeMismatches(release: EpochRelease, environment: EpochEnvironment): string[] {
  const wanted = release.environment;
  return (["v8", "isolatedVm", "icu", "tz", "unicode", "cldr"] as const)
    .filter((k) => wanted[k] !== undefined && wanted[k] !== environment[k])
    .map((k) => `${k} ${environment[k] ?? "unknown"} where the epoch has ${wanted[k]}`);
}

/**
 * The epoch new runs start in, in a process with this runtime: the newest released epoch it can
 * replay (Node 20: 2, Node 24: 3, Node 26: 4), else (a runtime whose only epoch is a draft) the
 * newest draft it can, else the newest released epoch (the process serves none: its runs wait for
 * workers that do). An API told otherwise (REWIND_NEW_RUN_EPOCH, newRunEpochProblem) starts them
 * in an older released epoch instead.
 */
export function newRunEpoch(environment: EpochEnvironment = currentEnvironment()): number {
  const served = EPOCHS.filter(
    (release) =>
      SUPPORTED_EPOCHS.includes(release.epoch) &&
      runtimeMismatches(release, environment).length === 0,
  );
  const newest = (releases: EpochRelease[]) => releases.at(-1)?.epoch;
  return (
    newest(served.filter((r) => !isDraft(r))) ?? newest(served.filter(isDraft)) ?? CURRENT_EPOCH
  );
}

/**
 * Why `epoch` cannot be the one an operator makes new runs start in (REWIND_NEW_RUN_EPOCH):
 * undefined when it can. Any released epoch this build supports can, whatever this process's own
 * runtime (the API executes nothing: the runs wait for workers of that epoch). It is for a
 * rollout that keeps new runs on the epoch its old workers serve, and for tests of upgrades;
 * a draft cannot, as its runs may not replay on the build that releases it.
 */
export function newRunEpochProblem(epoch: number): string | undefined {
  const release = findEpoch(epoch);
  const supported = EPOCHS.filter((r) => SUPPORTED_EPOCHS.includes(r.epoch) && !isDraft(r));
  const choices = `one of ${supported.map((r) => r.epoch).join(", ")}`;
  if (release === undefined || !SUPPORTED_EPOCHS.includes(epoch))
    return `epoch ${epoch} is not one this build supports: choose ${choices}, or leave it unset for the newest this runtime serves`;
  if (isDraft(release))
    return `epoch ${epoch} is a draft: new runs start only in a released epoch (${choices})`;
  return undefined;
}

/**
 * Why this process's engine computes differently from `epoch`'s recordings although its runtime
 * matches (undefined when it does not). Epoch 1's scripts read `Math.E` as undefined, as Node 20's
 * isolated-vm contexts have it without `--no-node-snapshot`; the flag gives them Math.E, which is
 * non-configurable, so no runtime can take it away again: such a process refuses epoch 1. (Epoch
 * 2's runtime defines Math.E itself: it computes the same with or without the flag.)
 */
export function engineProblemFor(epoch: number): string | undefined {
  // Only where the process really is epoch 1's runtime (later ones all have Math.E).
  if (epoch !== 1 || runtimeMismatches(findEpoch(1)!, currentEnvironment()).length > 0)
    return undefined;
  if (!contextsHaveMathE()) return undefined;
  return (
    "epoch 1's scripts read Math.E as undefined, and this process's sandbox contexts have it " +
    "(Node runs with --no-node-snapshot): its runs would diverge here. Start the worker without " +
    "--no-node-snapshot for epoch 1's runs"
  );
}

export interface EpochSupport {
  /** The epochs this process may execute. */
  epochs: number[];
  /** Epochs it claims but must not execute, each with why: one log line each. */
  refused: { epoch: number; reason: string }[];
  /** Differences that do not stop it, but that an operator should see. */
  warnings: string[];
}

/**
 * Which epochs a worker may really execute here. Each epoch is one runtime: its V8, isolated-vm
 * and Intl data (ICU, time zones, and where the row names them Unicode and CLDR). A process whose
 * runtime differs in any of them refuses the epoch: replaying its runs could diverge (a V8 that
 * computes differently, a month name or a zone rule that changed) and quarantine them all, so they
 * wait in their epoch's queue for a worker that matches.
 *
 * Without `claims`, a worker takes the supported epochs its runtime can replay (drafts only where
 * the runtime has no released epoch) and says nothing of the others (they belong to other
 * runtimes' workers), unless it can replay none: then every refusal is reported, to say why.
 * Epochs it is told to claim (REWIND_EPOCHS) are each reported.
 */
export function epochSupport(
  options: {
    claims?: readonly number[];
    environment?: EpochEnvironment;
    maxValueBytes?: number;
    sandboxDigest?: string;
  } = {},
): EpochSupport {
  const environment = options.environment ?? currentEnvironment();
  const support: EpochSupport = { epochs: [], refused: [], warnings: [] };
  const otherRuntimes: EpochSupport["refused"] = [];
  for (const epoch of options.claims ?? SUPPORTED_EPOCHS) {
    const release = findEpoch(epoch);
    if (release === undefined || !SUPPORTED_EPOCHS.includes(epoch)) {
      support.refused.push({
        epoch,
        reason:
          `epoch ${epoch} is not supported by this build (it supports ${SUPPORTED_EPOCHS.join(", ")}): ` +
          `run a build that does for its runs`,
      });
      continue;
    }
    const wanted = release.environment;
    const mismatches = runtimeMismatches(release, environment);
    if (mismatches.length > 0) {
      (options.claims === undefined ? otherRuntimes : support.refused).push({
        epoch,
        reason:
          `epoch ${epoch} needs V8 ${wanted.v8}, isolated-vm ${wanted.isolatedVm}, ICU ${wanted.icu} and ` +
          `tz ${wanted.tz}${wanted.cldr === undefined ? "" : ` (CLDR ${wanted.cldr}, Unicode ${wanted.unicode ?? "?"})`}, ` +
          `this process has ${mismatches.join(", ")}: its runs wait for a worker that matches. Deploy ` +
          `the Node the epoch names (${runtimeOf(release)}), or release a new epoch for this runtime`,
      });
      continue;
    }
    const engineProblem = engineProblemFor(epoch);
    if (engineProblem !== undefined) {
      support.refused.push({ epoch, reason: engineProblem });
      continue;
    }
    if (isDraft(release))
      support.warnings.push(
        `epoch ${epoch} is a draft (not released): its runs may not replay on the build that releases it; ` +
          `use it to try Rewind on this runtime, not for runs that must outlive this build`,
      );
    const sandboxDigest = options.sandboxDigest ?? guestBundle(epoch).digest;
    if (release.sandboxDigest !== sandboxDigest)
      support.warnings.push(
        `this build's sandbox runtime (${sandboxDigest}) is not epoch ${epoch}'s (${release.sandboxDigest}): ` +
          `the epoch digest test fails on it; release a new epoch before deploying it`,
      );
    if (
      options.maxValueBytes !== undefined &&
      options.maxValueBytes !== release.replay.maxValueBytes
    )
      support.warnings.push(
        `epoch ${epoch} replays with maxValueBytes ${release.replay.maxValueBytes}, this sandbox has ` +
          `${options.maxValueBytes}: a run whose values lie between the two may diverge`,
      );
    support.epochs.push(epoch);
  }
  if (support.epochs.length === 0) support.refused.push(...otherRuntimes);
  // Unclaimed drafts are served only by a runtime with no released epoch of its own (to run at
  // all): a runtime with a released epoch keeps to those until its draft is released.
  if (options.claims === undefined && support.epochs.some((e) => !isDraft(findEpoch(e)!))) {
    const drafts = support.epochs.filter((e) => isDraft(findEpoch(e)!));
    support.epochs = support.epochs.filter((e) => !drafts.includes(e));
    support.warnings = support.warnings.filter(
      (w) => !drafts.some((e) => w.startsWith(`epoch ${e} `)),
    );
  }
  return support;
}
