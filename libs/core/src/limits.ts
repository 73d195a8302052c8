import { RewindError } from "./errors.js";

/**
 * The limits a namespace runs under: the one list of their names, defaults and meaning. The API
 * enforces those of ENFORCED_AT_START when a run starts; the executor the others where a run's
 * journal is appended (never in the guest, which a script controls). A namespace may set its own (the table
 * rw_namespace_limits, `POST /v1/limits`, `rewind limits set`); unset ones take the default from
 * the environment of the process that enforces it (`REWIND_LIMIT_<NAME>`), then this table.
 */
export const LIMITS = {
  runsInFlight: {
    env: "REWIND_LIMIT_RUNS_IN_FLIGHT",
    default: 10_000,
    what: "runs of the namespace open at once (queued, running or waiting)",
  },
  startsPerSecond: {
    env: "REWIND_LIMIT_STARTS_PER_SECOND",
    default: 500,
    what: "runs the namespace may start (or fork) in one second",
  },
  journalEntries: {
    env: "REWIND_LIMIT_JOURNAL_ENTRIES",
    default: 100_000,
    what: "journal entries of one run",
  },
  journalBytes: {
    env: "REWIND_LIMIT_JOURNAL_BYTES",
    default: 256 * 1024 * 1024,
    what: "bytes of one run's journal (entries as JSON, values inline)",
  },
  outputBytes: {
    env: "REWIND_LIMIT_OUTPUT_BYTES",
    default: 16 * 1024 * 1024,
    what: "bytes of output (console) of one run",
  },
  timers: {
    env: "REWIND_LIMIT_TIMERS",
    default: 50_000,
    what: "timers one run may set (sleeps, setTimeout, signal timeouts)",
  },
} as const;

export type LimitName = keyof typeof LIMITS;
export type Limits = Record<LimitName, number>;
export const LIMIT_NAMES = Object.keys(LIMITS) as LimitName[];

/**
 * The limits the API checks when a run starts; the executor checks the others at the journal.
 * Apart from LIMITS on purpose: the replay engine's bundle holds LIMITS (its digest is pinned by
 * every epoch), and this list is no part of matching.
 */
const ENFORCED_AT_START: readonly LimitName[] = ["runsInFlight", "startsPerSecond"];

/** The limits one enforcer checks: the API's at a start, the executor's at the journal. */
export function limitsEnforcedAt(where: "start" | "journal"): LimitName[] {
  return LIMIT_NAMES.filter((name) => ENFORCED_AT_START.includes(name) === (where === "start"));
}

/** The defaults, each overridden by its `REWIND_LIMIT_*` variable when set (a positive integer). */
export function limitDefaults(env: Record<string, string | undefined> = process.env): Limits {
  const limits = {} as Limits;
  for (const name of LIMIT_NAMES) {
    const text = env[LIMITS[name].env];
    const value = text === undefined || text === "" ? LIMITS[name].default : Number(text);
    if (!Number.isSafeInteger(value) || value <= 0)
      throw new RewindError(
        "INVALID_INPUT",
        `${LIMITS[name].env} must be a positive integer (the limit on ${LIMITS[name].what}), got ${JSON.stringify(text)}`,
      );
    limits[name] = value;
  }
  return limits;
}

/** A namespace's own settings over the defaults. */
export function effectiveLimits(
  defaults: Limits,
  own: Partial<Record<LimitName, number | null>>,
): Limits {
  const limits = { ...defaults };
  for (const name of LIMIT_NAMES) {
    const value = own[name];
    if (typeof value === "number") limits[name] = value;
  }
  return limits;
}

/** The error a limit raises: its name, its value, what was asked, and how to raise it. */
export function limitExceeded(
  name: LimitName,
  limit: number,
  namespace: string,
  detail: string,
  details: Readonly<Record<string, unknown>> = {},
): RewindError {
  return new RewindError(
    "LIMIT_EXCEEDED",
    `Limit ${name} of namespace ${namespace} reached: at most ${limit} ${LIMITS[name].what}; ${detail}. ` +
      `An operator raises it with \`rewind limits set ${name}=<n>\` (POST /v1/limits), or for every namespace with ${LIMITS[name].env}`,
    { limit: name, value: limit, namespace, ...details },
  );
}
