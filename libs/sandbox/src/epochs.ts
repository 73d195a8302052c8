import { isolatedVmVersion } from "./engine.js";
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
  /** The day it was released. */
  released: string;
  environment: EpochEnvironment;
  /** `sha256:` of the guest runtime the isolate evaluates (`guestBundle().digest`). */
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

/** Every epoch ever released, oldest first. Released rows are never edited. */
export const EPOCHS: readonly EpochRelease[] = [
  {
    epoch: 1,
    released: "2026-11-29",
    environment: { v8: "11.3.244.8", isolatedVm: "5.0.4", icu: "78.2", tz: "2025c" },
    sandboxDigest: "sha256:408bf50af15e0df04a88c652028187a62cf64fea7cc9e34610638cfa1d9dfbbc",
    // Updated on purpose from sha256:747b7086…: the error table gained GIVEN_UP. The engine reads
    // that table only for RewindError.retryable, never to match or write entries: replays of
    // epoch 1 are unaffected (the corpus replays byte for byte).
    // Then from sha256:8a70737d…: orderEntry remembers each entry shape's key order instead of
    // sorting every entry's keys; the order is the same (libs/core/src/entries.test.ts checks it
    // against the sort it replaced), and the corpus replays byte for byte.
    matchingDigest: "sha256:4c46d33e009b9ed6bf9c5b0e0e3cc90ecbfe611f11dd2c8264fda9d6dafa844e",
    replay: {
      timeZone: "UTC",
      defaultLocale: "en-US",
      random: "ChaCha20 (RFC 8439) keyed by the run's 256-bit seed",
      maxValueBytes: 4 * 1024 * 1024,
    },
    notes: "Node 20.20 with isolated-vm 5.0.4: the first release.",
  },
];

/** The epochs this build can replay: its runtime and matching code are theirs, digest for digest. */
export const SUPPORTED_EPOCHS: readonly number[] = [1];

/** The newest supported epoch: new runs start in it. */
export const CURRENT_EPOCH = 1;

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
  };
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
 * Which of the epochs a worker claims it may really execute here. A V8 or isolated-vm that is
 * not the epoch's refuses the epoch: replaying its runs could diverge and quarantine them all,
 * so they wait in their epoch's queue for a worker that matches. Different Intl data only warns:
 * it changes output only for scripts that format dates in named zones or locale-specific
 * numbers, and a run it does change is caught by replay and quarantined, never failed.
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
  const sandboxDigest = options.sandboxDigest ?? guestBundle().digest;
  const support: EpochSupport = { epochs: [], refused: [], warnings: [] };
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
    const mismatches = (["v8", "isolatedVm"] as const).filter((k) => wanted[k] !== environment[k]);
    if (mismatches.length > 0) {
      const what = mismatches
        .map((k) => `${k} ${environment[k]} where the epoch has ${wanted[k]}`)
        .join(", ");
      support.refused.push({
        epoch,
        reason:
          `epoch ${epoch} needs V8 ${wanted.v8} and isolated-vm ${wanted.isolatedVm}, this process has ${what}: ` +
          `its runs wait for a worker that matches. Deploy the Node and isolated-vm the epoch names, or ` +
          `release a new epoch for this environment`,
      });
      continue;
    }
    for (const k of ["icu", "tz"] as const) {
      if (wanted[k] !== environment[k])
        support.warnings.push(
          `epoch ${epoch} was released with ${k} ${wanted[k]}, this process has ${environment[k]}: ` +
            `scripts that format dates in named time zones or locale-specific text may diverge (and be quarantined)`,
        );
    }
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
  return support;
}
