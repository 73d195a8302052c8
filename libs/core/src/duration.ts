/**
 * Durations as scripts and toolsets write them: a number of milliseconds, or a string such as
 * "250ms", "30s", "5m", "1h30m", "10d". Pure (no imports): the sandbox's guest runtime uses it too.
 */
const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/y;

export type Duration = number | string;

export function parseDuration(duration: Duration, what = "duration"): number {
  if (typeof duration === "number") {
    if (!Number.isFinite(duration) || duration < 0) {
      throw new RangeError(`${what} must be a finite number of milliseconds ≥ 0, got ${duration}`);
    }
    return Math.floor(duration);
  }
  if (typeof duration !== "string" || duration.length === 0) {
    throw new TypeError(
      `${what} must be milliseconds or a string like "30s" or "10d", got ${typeof duration}`,
    );
  }
  let total = 0;
  PART.lastIndex = 0;
  let index = 0;
  while (index < duration.length) {
    PART.lastIndex = index;
    const match = PART.exec(duration);
    if (match === null) {
      throw new RangeError(
        `${what} "${duration}" is not a duration: use a number and a unit (ms, s, m, h, d, w), like "30s" or "1h30m"`,
      );
    }
    total += Number(match[1]) * (UNIT_MS[match[2] as string] as number);
    index = PART.lastIndex;
  }
  return Math.floor(total);
}
